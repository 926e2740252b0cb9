output "kubeconfig_command" {
  description = "Writes a kubeconfig for the cluster."
  value       = module.lakeplanner.kubeconfig_command
}

output "warehouse_uri" {
  description = "The Iceberg warehouse."
  value       = module.lakeplanner.warehouse_uri
}

output "endpoints" {
  description = "In-cluster endpoints of the catalog, Trino and Milvus."
  value       = module.lakeplanner.endpoints
}

output "workload_role_arns" {
  description = "IRSA roles per workload."
  value       = module.lakeplanner.workload_role_arns
}
