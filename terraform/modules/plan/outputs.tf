output "name_prefix" {
  description = "NAME-ENV, the prefix of every named resource."
  value       = local.prefix
}

output "cluster_name" {
  description = "Kubernetes cluster name."
  value       = local.prefix
}

output "namespace" {
  description = "Kubernetes namespace of every release but the operators'."
  value       = var.namespace
}

output "node_groups" {
  description = "Node groups by pool (cpu, and gpu when enabled): name, gpu, instance types, sizes, disk, labels and Kubernetes taints."
  value       = local.node_groups
}

output "bucket_name" {
  description = "Name of the warehouse bucket."
  value       = local.bucket_name

  precondition {
    condition     = can(regex("^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$", local.bucket_name)) && !strcontains(local.bucket_name, "..")
    error_message = "The derived bucket name is not a valid bucket name (3-63 characters); shorten name, environment or bucket_suffix."
  }
}

output "warehouse_uri" {
  description = "The Iceberg warehouse location (SCHEME://BUCKET/PREFIX)."
  value       = local.warehouse_uri
}

output "milvus_prefix" {
  description = "Prefix of Milvus' segments in the bucket."
  value       = var.object_store.milvus_prefix
}

output "workloads" {
  description = "Workloads that need object-store access: service account, namespace, identity (role) name, access (read or read-write) and bucket prefixes."
  value       = local.workloads

  precondition {
    condition     = alltrue([for w in values(local.workloads) : length(w.role_name) <= 64])
    error_message = "An IAM role name would exceed 64 characters; shorten name or environment."
  }
}

output "lake_volume" {
  description = "The lake directory's volume: storage class, access modes, size."
  value       = var.lake_volume
}

output "enabled_charts" {
  description = "Which Helm releases are installed."
  value       = local.enabled_charts
}

output "chart_versions" {
  description = "Exact chart version of each release."
  value       = var.chart_versions
}

output "endpoints" {
  description = "In-cluster endpoints lakeplanner is configured with: catalog (Iceberg REST), Trino host, Milvus URI."
  value = {
    catalog_uri = local.catalog_uri
    trino_host  = local.trino_host
    milvus_uri  = local.milvus_uri
  }
}

output "gpu_toleration" {
  description = "The toleration of the GPU node group's taint, for workloads placed there."
  value       = local.gpu_toleration
}

output "chart_values" {
  description = "Values of each Helm release, as objects (yamlencode them for helm_release)."
  value = {
    kuberay_operator     = local.kuberay_values
    nvidia_device_plugin = local.nvidia_device_plugin_values
    catalog              = local.catalog_values
    trino                = local.trino_values
    milvus               = local.milvus_values
    lakeplanner          = local.lakeplanner_values
  }

  precondition {
    condition     = var.llm.provider != "rayService" || var.gpu_node_group.enabled
    error_message = "llm.provider = rayService serves vLLM on GPUs: enable gpu_node_group."
  }

  precondition {
    condition     = (var.lakeplanner.replicas == 1 && !var.ray.enabled) || contains(var.lake_volume.access_modes, "ReadWriteMany")
    error_message = "Several lakeplanner replicas or Ray workers mount the lake directory together: lake_volume.access_modes needs ReadWriteMany."
  }

  precondition {
    condition     = var.lakeplanner.replicas == 1 || var.milvus.enabled
    error_message = "Several lakeplanner replicas need a Milvus server (milvus.enabled): Milvus Lite is one process's file."
  }

  precondition {
    condition     = var.object_store.provider != "aws" || (var.object_store.region != "" && var.object_store.endpoint != "")
    error_message = "object_store.region and object_store.endpoint are required with the aws provider (Milvus and the catalog talk to S3 directly)."
  }
}
