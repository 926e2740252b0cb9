# Every name, node group, grant and chart value is decided in modules/plan (provider-free, tested offline);
# the files beside this one only turn its outputs into AWS resources and Helm releases.
module "plan" {
  source = "./modules/plan"

  name           = var.name
  environment    = var.environment
  namespace      = var.namespace
  cpu_node_group = var.cpu_node_group
  gpu_node_group = var.gpu_node_group
  object_store = {
    provider      = "aws"
    scheme        = "s3"
    bucket_suffix = data.aws_caller_identity.current.account_id
    region        = var.region
    endpoint      = "s3.${var.region}.amazonaws.com"
  }
  catalog = var.catalog
  catalog_version_store_values = var.catalog.version_store == "DYNAMODB2" ? {
    dynamodb = { region = var.region, secret = null }
    advancedConfig = {
      "nessie.version.store.persist.dynamodb.table-prefix" = local.dynamodb_table_prefix
    }
  } : {}
  trino = merge(var.trino, {
    object_store_properties = {
      "fs.native-s3.enabled" = "true"
      "s3.region"            = var.region
    }
  })
  milvus                        = var.milvus
  ray                           = var.ray
  llm                           = var.llm
  lakeplanner                   = var.lakeplanner
  otlp_endpoint                 = var.otlp_endpoint
  lake_volume                   = { storage_class = "${local.prefix}-lake", access_modes = ["ReadWriteMany"], size = "20Gi" }
  chart_versions                = var.chart_versions
  workload_identity_annotations = { for k, r in aws_iam_role.workload : k => { "eks.amazonaws.com/role-arn" = r.arn } }
}

data "aws_caller_identity" "current" {}

data "aws_partition" "current" {}

locals {
  prefix                = module.plan.name_prefix
  dynamodb_table_prefix = replace("${var.name}_${var.environment}_nessie", "-", "_")
  tags                  = merge(var.tags, { "app.kubernetes.io/part-of" = "lakeplanner", "lakeplanner/environment" = var.environment })
  use_kms               = var.bucket_encryption == "aws:kms"
}
