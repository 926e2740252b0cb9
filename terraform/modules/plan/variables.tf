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

variable "namespace" {
  type        = string
  description = "Kubernetes namespace of lakeplanner, Trino, Milvus and the catalog."
  default     = "lakeplanner"

  validation {
    condition     = can(regex("^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$", var.namespace))
    error_message = "namespace must be a DNS-1123 label (a-z, 0-9, '-', at most 63 characters)."
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
  description = "The untainted CPU node group: API, Trino, Milvus, catalog and Ray CPU workers."
  default = {
    instance_types = ["m6i.2xlarge"]
    min_size       = 2
    max_size       = 6
    desired_size   = 3
  }

  validation {
    condition     = length(var.cpu_node_group.instance_types) > 0
    error_message = "cpu_node_group.instance_types must name at least one instance type."
  }

  validation {
    condition = (
      var.cpu_node_group.min_size >= 1 &&
      var.cpu_node_group.min_size <= var.cpu_node_group.desired_size &&
      var.cpu_node_group.desired_size <= var.cpu_node_group.max_size
    )
    error_message = "cpu_node_group needs 1 <= min_size <= desired_size <= max_size."
  }

  validation {
    condition     = var.cpu_node_group.disk_size_gb >= 20
    error_message = "cpu_node_group.disk_size_gb must be at least 20."
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
  description = "The GPU node group (vLLM serving, Ray GPU workers); tainted nvidia.com/gpu=present:NoSchedule."
  default     = {}

  validation {
    condition     = length(var.gpu_node_group.instance_types) > 0
    error_message = "gpu_node_group.instance_types must name at least one instance type."
  }

  validation {
    condition = (
      var.gpu_node_group.min_size >= 0 &&
      var.gpu_node_group.min_size <= var.gpu_node_group.desired_size &&
      var.gpu_node_group.desired_size <= var.gpu_node_group.max_size &&
      var.gpu_node_group.max_size >= 1
    )
    error_message = "gpu_node_group needs 0 <= min_size <= desired_size <= max_size and max_size >= 1."
  }

  validation {
    condition     = var.gpu_node_group.gpus_per_node >= 1 && var.gpu_node_group.gpus_per_node <= 8
    error_message = "gpu_node_group.gpus_per_node must be between 1 and 8."
  }
}

variable "object_store" {
  type = object({
    provider         = optional(string, "aws")
    scheme           = optional(string, "s3")
    bucket_name      = optional(string, "")
    bucket_suffix    = optional(string, "")
    region           = optional(string, "")
    endpoint         = optional(string, "")
    warehouse_prefix = optional(string, "warehouse")
    milvus_prefix    = optional(string, "milvus")
  })
  description = "Object storage of the Iceberg warehouse and Milvus segments: one bucket, one prefix each. bucket_name \"\" derives NAME-ENV-lake[-SUFFIX]; the cloud root passes region, endpoint (host) and a suffix such as the account id."
  default     = {}

  validation {
    condition     = contains(["aws", "gcp", "azure", "minio"], var.object_store.provider)
    error_message = "object_store.provider must be aws, gcp, azure or minio."
  }

  validation {
    condition     = contains(["s3", "gs", "abfss"], var.object_store.scheme)
    error_message = "object_store.scheme must be s3, gs or abfss."
  }

  validation {
    condition     = var.object_store.bucket_name == "" || can(regex("^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$", var.object_store.bucket_name))
    error_message = "object_store.bucket_name must be 3-63 characters of a-z, 0-9, '.' and '-' (or \"\" to derive it)."
  }

  validation {
    condition     = var.object_store.bucket_suffix == "" || can(regex("^[a-z0-9-]{1,20}$", var.object_store.bucket_suffix))
    error_message = "object_store.bucket_suffix must be at most 20 characters of a-z, 0-9 and '-'."
  }

  validation {
    condition = alltrue([
      for p in [var.object_store.warehouse_prefix, var.object_store.milvus_prefix] :
      can(regex("^[a-z0-9]([a-z0-9_/-]{0,62}[a-z0-9])?$", p)) && !strcontains(p, "//")
    ])
    error_message = "object_store prefixes must be non-empty paths of a-z, 0-9, '_', '-' and '/', without leading, trailing or double '/'."
  }

  validation {
    condition = (
      !startswith("${var.object_store.warehouse_prefix}/", "${var.object_store.milvus_prefix}/") &&
      !startswith("${var.object_store.milvus_prefix}/", "${var.object_store.warehouse_prefix}/")
    )
    error_message = "object_store.warehouse_prefix and milvus_prefix must not overlap: each workload is granted its own prefix."
  }
}

variable "catalog" {
  type = object({
    rest_uri            = optional(string, "")
    sql_uri             = optional(string, "")
    sql_password_secret = optional(string, "")
    warehouse           = optional(string, "lake")
    version_store       = optional(string, "IN_MEMORY")
  })
  description = "The Iceberg catalog. rest_uri \"\" deploys Nessie (its Iceberg REST API) in the namespace; an http(s) URI uses an existing REST catalog instead. sql_uri (postgresql+psycopg://USER@HOST:PORT/DB, no password) uses a PostgreSQL catalog database instead, shared by lakeplanner (pyiceberg's SQL catalog), Spark (Iceberg's JDBC catalog) and Trino (iceberg.catalog.type=jdbc); its password comes from the Kubernetes Secret sql_password_secret (key `password`), as PGPASSWORD for lakeplanner and ICEBERG_JDBC_PASSWORD for Trino. version_store is Nessie's persistence (DYNAMODB2 on AWS, BIGTABLE on GCP, JDBC2 anywhere)."
  default     = {}

  validation {
    condition     = var.catalog.sql_uri == "" || can(regex("^postgresql\\+psycopg://[^:@/\\s]+@[^/@\\s]+/[^/\\s]+$", var.catalog.sql_uri))
    error_message = "catalog.sql_uri must be \"\" or postgresql+psycopg://USER@HOST:PORT/DB, without a password (name the Secret that holds it in sql_password_secret)."
  }

  validation {
    condition     = var.catalog.sql_uri == "" || (var.catalog.rest_uri == "" && var.catalog.sql_password_secret != "")
    error_message = "catalog.sql_uri needs catalog.sql_password_secret, and excludes catalog.rest_uri (one catalog)."
  }

  validation {
    condition     = var.catalog.rest_uri == "" || can(regex("^https?://[^\\s/]+", var.catalog.rest_uri))
    error_message = "catalog.rest_uri must be \"\" (deploy Nessie) or an http(s):// URI."
  }

  validation {
    condition     = contains(["IN_MEMORY", "ROCKSDB", "DYNAMODB2", "JDBC2", "MONGODB2", "CASSANDRA2", "BIGTABLE"], var.catalog.version_store)
    error_message = "catalog.version_store must be one of IN_MEMORY, ROCKSDB, DYNAMODB2, JDBC2, MONGODB2, CASSANDRA2, BIGTABLE."
  }

  validation {
    condition     = can(regex("^[a-z][a-z0-9_]{0,30}$", var.catalog.warehouse))
    error_message = "catalog.warehouse (the catalog's warehouse name) must be 1-31 characters of a-z, 0-9 and '_'."
  }
}

variable "catalog_version_store_values" {
  type        = any
  description = "Extra Nessie chart values for the version store (e.g. {dynamodb = {region = ...}}), merged over the computed ones."
  default     = {}
}

variable "trino" {
  type = object({
    enabled                 = optional(bool, true)
    workers                 = optional(number, 2)
    user                    = optional(string, "lakeplanner")
    admin_user              = optional(string, "admin")
    catalog                 = optional(string, "iceberg")
    schema                  = optional(string, "lake")
    object_store_properties = optional(map(string), {})
  })
  description = "Trino: worker count, the read-only user lakeplanner connects as, the admin user, the Iceberg catalog and schema names, and file-system properties of the catalog (s3.region, ...)."
  default     = {}

  validation {
    condition     = var.trino.workers >= 0 && var.trino.workers <= 100
    error_message = "trino.workers must be between 0 and 100."
  }

  validation {
    condition     = alltrue([for u in [var.trino.user, var.trino.admin_user] : can(regex("^[a-z][a-z0-9_-]{0,31}$", u))])
    error_message = "trino.user and trino.admin_user must be 1-32 characters of a-z, 0-9, '_' and '-'."
  }

  validation {
    condition     = var.trino.user != var.trino.admin_user
    error_message = "trino.user (read-only) and trino.admin_user must differ."
  }

  validation {
    condition     = alltrue([for c in [var.trino.catalog, var.trino.schema] : can(regex("^[a-z][a-z0-9_]{0,62}$", c))])
    error_message = "trino.catalog and trino.schema must be lower-case identifiers."
  }
}

variable "milvus" {
  type = object({
    enabled = optional(bool, true)
    mode    = optional(string, "standalone")
  })
  description = "Milvus: standalone (one pod, embedded message queue) or cluster (separate coordinators and nodes, Pulsar, 3 etcd replicas)."
  default     = {}

  validation {
    condition     = contains(["standalone", "cluster"], var.milvus.mode)
    error_message = "milvus.mode must be standalone or cluster."
  }
}

variable "ray" {
  type = object({
    enabled         = optional(bool, true)
    cpu_workers_min = optional(number, 1)
    cpu_workers_max = optional(number, 4)
    gpu_workers_max = optional(number, 2)
  })
  description = "The lakeplanner chart's KubeRay RayCluster: CPU worker bounds, and GPU worker bounds used when the GPU node group is enabled."
  default     = {}

  validation {
    condition     = var.ray.cpu_workers_min >= 0 && var.ray.cpu_workers_min <= var.ray.cpu_workers_max
    error_message = "ray needs 0 <= cpu_workers_min <= cpu_workers_max."
  }

  validation {
    condition     = var.ray.gpu_workers_max >= 0
    error_message = "ray.gpu_workers_max must not be negative."
  }
}

variable "llm" {
  type = object({
    provider = optional(string, "local")
    model    = optional(string, "default")
    base_url = optional(string, "")
  })
  description = "Who answers: local (llama.cpp in the API pod; model default or small), external (an OpenAI-compatible base_url; model is the served name) or rayService (vLLM on the GPU node group; model is the served name)."
  default     = {}

  validation {
    condition     = contains(["local", "external", "rayService"], var.llm.provider)
    error_message = "llm.provider must be local, external or rayService."
  }

  validation {
    condition     = var.llm.provider != "external" || can(regex("^https?://[^\\s]+$", var.llm.base_url))
    error_message = "llm.base_url must be an http(s):// URL when llm.provider is external."
  }

  validation {
    condition     = var.llm.provider != "local" || contains(["default", "small"], var.llm.model)
    error_message = "llm.model must be default or small with the local provider (the models baked into the image)."
  }
}

variable "lakeplanner" {
  type = object({
    image_repository = optional(string, "ghcr.io/lakeplanner/lakeplanner")
    image_tag        = optional(string, "")
    replicas         = optional(number, 2)
    ingress_host     = optional(string, "")
    ingress_class    = optional(string, "")
  })
  description = "The lakeplanner API: image, replicas and an optional Ingress host."
  default     = {}

  validation {
    condition     = var.lakeplanner.replicas >= 1 && var.lakeplanner.replicas <= 50
    error_message = "lakeplanner.replicas must be between 1 and 50."
  }

  validation {
    condition     = var.lakeplanner.image_tag == "" || can(regex("^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$", var.lakeplanner.image_tag))
    error_message = "lakeplanner.image_tag must be a valid image tag (or \"\" for the chart's appVersion)."
  }

  validation {
    condition     = var.lakeplanner.ingress_host == "" || can(regex("^([a-z0-9]([-a-z0-9]*[a-z0-9])?\\.)+[a-z]{2,}$", var.lakeplanner.ingress_host))
    error_message = "lakeplanner.ingress_host must be a DNS name (or \"\" for no Ingress)."
  }
}

variable "otlp_endpoint" {
  type        = string
  description = "OTLP/HTTP traces endpoint lakeplanner also exports spans to (\"\" = none)."
  default     = ""

  validation {
    condition     = var.otlp_endpoint == "" || can(regex("^https?://[^\\s]+$", var.otlp_endpoint))
    error_message = "otlp_endpoint must be \"\" or an http(s):// URL."
  }
}

variable "workload_identity_annotations" {
  type        = map(map(string))
  description = "Service-account annotations per workload (lakeplanner, trino, catalog, milvus), e.g. eks.amazonaws.com/role-arn for IRSA or iam.gke.io/gcp-service-account on GKE."
  default     = {}

  validation {
    condition     = alltrue([for k in keys(var.workload_identity_annotations) : contains(["lakeplanner", "trino", "catalog", "milvus"], k)])
    error_message = "workload_identity_annotations keys must be among lakeplanner, trino, catalog, milvus."
  }
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
  description = "Exact chart versions of every Helm release (semantic versions, no ranges)."
  default     = {}

  validation {
    condition = alltrue([
      for v in values(var.chart_versions) : can(regex("^[0-9]+\\.[0-9]+\\.[0-9]+(-[0-9A-Za-z.-]+)?$", v))
    ])
    error_message = "chart_versions must be exact semantic versions (1.2.3), not ranges."
  }
}

variable "lake_volume" {
  type = object({
    storage_class = optional(string, "lakeplanner-lake")
    access_modes  = optional(list(string), ["ReadWriteMany"])
    size          = optional(string, "20Gi")
  })
  description = "The lake directory's volume (contract, plan cache, traces). Several API replicas or Ray workers need ReadWriteMany; the cloud root provides the storage class (EFS, Filestore, Azure Files)."
  default     = {}

  validation {
    condition     = can(regex("^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$", var.lake_volume.storage_class))
    error_message = "lake_volume.storage_class must be a Kubernetes object name."
  }

  validation {
    condition     = length(var.lake_volume.access_modes) > 0 && alltrue([for m in var.lake_volume.access_modes : contains(["ReadWriteOnce", "ReadWriteMany", "ReadWriteOncePod", "ReadOnlyMany"], m)])
    error_message = "lake_volume.access_modes must be Kubernetes access modes."
  }

  validation {
    condition     = can(regex("^[0-9]+(Mi|Gi|Ti)$", var.lake_volume.size))
    error_message = "lake_volume.size must be a quantity such as 20Gi."
  }
}
