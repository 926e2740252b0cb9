variable "name" {
  type        = string
  description = "Short deployment name; prefixes the cluster, bucket, node groups and IAM roles."

  validation {
    condition     = can(regex("^[a-z][a-z0-9-]{0,18}[a-z0-9]$", var.name))
    error_message = "name must be 2-20 characters of a-z, 0-9 and '-', start with a letter and not end with '-'."
  }
}

variable "environment" {
  type        = string
  description = "Environment label (dev, staging, prod, ...); part of every resource name."

  validation {
    condition     = can(regex("^[a-z][a-z0-9]{0,9}$", var.environment))
    error_message = "environment must be 1-10 characters of a-z and 0-9, starting with a letter."
  }
}

variable "region" {
  type        = string
  description = "AWS region of the cluster and the bucket (the aws provider's region must match)."

  validation {
    condition     = can(regex("^[a-z]{2}(-gov)?-[a-z]+-[0-9]$", var.region))
    error_message = "region must be an AWS region name such as eu-west-1."
  }
}

variable "subnet_ids" {
  type        = list(string)
  description = "Private subnets (at least two availability zones) for the control plane and the node groups."

  validation {
    condition     = length(var.subnet_ids) >= 2 && alltrue([for s in var.subnet_ids : can(regex("^subnet-[0-9a-f]+$", s))])
    error_message = "subnet_ids needs at least two subnet-... ids."
  }
}

variable "kubernetes_version" {
  type        = string
  description = "EKS Kubernetes minor version."
  default     = "1.33"

  validation {
    condition     = can(regex("^1\\.(3[0-9])$", var.kubernetes_version))
    error_message = "kubernetes_version must be a 1.3x minor version, e.g. 1.33."
  }
}

variable "cluster_endpoint_public_access_cidrs" {
  type        = list(string)
  description = "CIDRs allowed to reach the public API endpoint; [] makes the endpoint private only."
  default     = []

  validation {
    condition     = alltrue([for c in var.cluster_endpoint_public_access_cidrs : can(cidrhost(c, 0)) && c != "0.0.0.0/0"])
    error_message = "cluster_endpoint_public_access_cidrs must be CIDRs, and not 0.0.0.0/0."
  }
}

variable "namespace" {
  type        = string
  description = "Kubernetes namespace of lakeplanner, Trino, Milvus and the catalog."
  default     = "lakeplanner"

  validation {
    condition     = can(regex("^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$", var.namespace))
    error_message = "namespace must be a DNS-1123 label."
  }
}

variable "cpu_node_group" {
  type = object({
    instance_types = list(string)
    min_size       = number
    max_size       = number
    desired_size   = number
    disk_size_gb   = optional(number, 100)
  })
  description = "The untainted CPU node group (validated in modules/plan)."
  default = {
    instance_types = ["m6i.2xlarge"]
    min_size       = 2
    max_size       = 6
    desired_size   = 3
  }
}

variable "gpu_node_group" {
  type = object({
    enabled        = optional(bool, false)
    instance_types = optional(list(string), ["g6.xlarge"])
    min_size       = optional(number, 0)
    max_size       = optional(number, 2)
    desired_size   = optional(number, 0)
    disk_size_gb   = optional(number, 200)
    gpus_per_node  = optional(number, 1)
  })
  description = "The GPU node group, tainted nvidia.com/gpu=present:NoSchedule (validated in modules/plan)."
  default     = {}
}

variable "bucket_encryption" {
  type        = string
  description = "Default encryption of the warehouse bucket: aws:kms (a customer-managed key made here) or AES256 (S3-managed)."
  default     = "aws:kms"

  validation {
    condition     = contains(["aws:kms", "AES256"], var.bucket_encryption)
    error_message = "bucket_encryption must be aws:kms or AES256."
  }
}

variable "noncurrent_version_expiration_days" {
  type        = number
  description = "Days before noncurrent object versions are deleted (Iceberg keeps its own snapshots)."
  default     = 30

  validation {
    condition     = var.noncurrent_version_expiration_days >= 1
    error_message = "noncurrent_version_expiration_days must be at least 1."
  }
}

variable "force_destroy_bucket" {
  type        = bool
  description = "Let `terraform destroy` delete a bucket that still holds objects (dev environments only)."
  default     = false
}

variable "catalog" {
  type = object({
    rest_uri            = optional(string, "")
    sql_uri             = optional(string, "")
    sql_password_secret = optional(string, "")
    warehouse           = optional(string, "lake")
    version_store       = optional(string, "DYNAMODB2")
  })
  description = "Iceberg catalog: rest_uri \"\" deploys Nessie (version store in DynamoDB by default); an http(s) URI uses an existing REST catalog; sql_uri (postgresql+psycopg://USER@HOST:PORT/DB) a PostgreSQL catalog shared by lakeplanner, Spark and Trino, its password in the Kubernetes Secret sql_password_secret (key password)."
  default     = {}
}

variable "trino" {
  type = object({
    enabled    = optional(bool, true)
    workers    = optional(number, 2)
    user       = optional(string, "lakeplanner")
    admin_user = optional(string, "admin")
    catalog    = optional(string, "iceberg")
    schema     = optional(string, "lake")
  })
  description = "Trino: workers, lakeplanner's read-only user, the admin user, catalog and schema names."
  default     = {}
}

variable "milvus" {
  type = object({
    enabled = optional(bool, true)
    mode    = optional(string, "standalone")
  })
  description = "Milvus: enabled, and standalone or cluster."
  default     = {}
}

variable "ray" {
  type = object({
    enabled         = optional(bool, true)
    cpu_workers_min = optional(number, 1)
    cpu_workers_max = optional(number, 4)
    gpu_workers_max = optional(number, 2)
  })
  description = "The lakeplanner chart's RayCluster worker bounds."
  default     = {}
}

variable "llm" {
  type = object({
    provider = optional(string, "local")
    model    = optional(string, "default")
    base_url = optional(string, "")
  })
  description = "LLM: local, external (base_url) or rayService (vLLM on the GPU group)."
  default     = {}
}

variable "lakeplanner" {
  type = object({
    image_repository = optional(string, "ghcr.io/lakeplanner/lakeplanner")
    image_tag        = optional(string, "")
    replicas         = optional(number, 2)
    ingress_host     = optional(string, "")
    ingress_class    = optional(string, "")
  })
  description = "The lakeplanner API: image, replicas, Ingress host and class."
  default     = {}
}

variable "lakeplanner_chart" {
  type        = string
  description = "The lakeplanner chart: a local path (default: this repository's helm/lakeplanner) or a chart name in lakeplanner_chart_repository."
  default     = ""
}

variable "lakeplanner_chart_repository" {
  type        = string
  description = "Helm repository (https:// or oci://) of the lakeplanner chart; \"\" for a local path."
  default     = ""

  validation {
    condition     = var.lakeplanner_chart_repository == "" || can(regex("^(https|oci)://", var.lakeplanner_chart_repository))
    error_message = "lakeplanner_chart_repository must be \"\" or an https:// or oci:// URL."
  }
}

variable "lakeplanner_extra_values" {
  type        = any
  description = "More lakeplanner chart values, merged over the computed ones by Helm (secrets, policies, resources, ...)."
  default     = {}
}

variable "otlp_endpoint" {
  type        = string
  description = "OTLP/HTTP traces endpoint for lakeplanner's spans (\"\" = none)."
  default     = ""
}

variable "chart_versions" {
  type = object({
    kuberay_operator     = optional(string, "1.4.2")
    trino                = optional(string, "1.39.1")
    milvus               = optional(string, "4.2.45")
    nessie               = optional(string, "0.104.5")
    nvidia_device_plugin = optional(string, "0.17.1")
    lakeplanner          = optional(string, "0.1.0")
  })
  description = "Exact chart version of each Helm release (validated in modules/plan)."
  default     = {}
}

variable "tags" {
  type        = map(string)
  description = "Tags added to every AWS resource."
  default     = {}
}
