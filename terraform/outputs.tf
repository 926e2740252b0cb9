output "cluster_name" {
  description = "EKS cluster name (aws eks update-kubeconfig --name ...)."
  value       = aws_eks_cluster.this.name
}

output "cluster_endpoint" {
  description = "EKS API server endpoint."
  value       = aws_eks_cluster.this.endpoint
}

output "cluster_certificate_authority_data" {
  description = "Base64 CA certificate of the API server, for the kubernetes and helm providers."
  value       = aws_eks_cluster.this.certificate_authority[0].data
}

output "oidc_provider_arn" {
  description = "IAM OIDC provider of the cluster (IRSA)."
  value       = aws_iam_openid_connect_provider.eks.arn
}

output "node_groups" {
  description = "Node groups by pool, with their labels and taints."
  value       = module.plan.node_groups
}

output "bucket_name" {
  description = "The warehouse bucket."
  value       = aws_s3_bucket.lake.bucket
}

output "warehouse_uri" {
  description = "Iceberg warehouse location (LAKEPLANNER_LAKE_WAREHOUSE)."
  value       = module.plan.warehouse_uri
}

output "kms_key_arn" {
  description = "KMS key of the bucket (null with AES256)."
  value       = local.use_kms ? aws_kms_key.lake[0].arn : null
}

output "workload_role_arns" {
  description = "IRSA role ARN per workload (lakeplanner, trino, catalog, milvus)."
  value       = { for k, r in aws_iam_role.workload : k => r.arn }
}

output "endpoints" {
  description = "In-cluster endpoints: Iceberg REST catalog, Trino host, Milvus URI."
  value       = module.plan.endpoints
}

output "enabled_charts" {
  description = "Which Helm releases were installed."
  value       = module.plan.enabled_charts
}

output "kubeconfig_command" {
  description = "Command that writes a kubeconfig for the cluster."
  value       = "aws eks update-kubeconfig --region ${var.region} --name ${aws_eks_cluster.this.name}"
}
