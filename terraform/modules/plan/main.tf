locals {
  prefix = "${var.name}-${var.environment}"
  ns_dns = "${var.namespace}.svc.cluster.local"

  # ---- storage --------------------------------------------------------------------------------
  bucket_name   = var.object_store.bucket_name != "" ? var.object_store.bucket_name : join("-", compact([local.prefix, "lake", var.object_store.bucket_suffix]))
  warehouse_uri = "${var.object_store.scheme}://${local.bucket_name}/${var.object_store.warehouse_prefix}"

  # ---- node groups ----------------------------------------------------------------------------
  pool_label = "lakeplanner.io/pool"
  gpu_taint  = { key = "nvidia.com/gpu", value = "present", effect = "NoSchedule" }
  gpu_taints = tolist([local.gpu_taint])
  gpu_toleration = [{
    key      = local.gpu_taint.key
    operator = "Exists"
    effect   = local.gpu_taint.effect
  }]
  cpu_selector = { (local.pool_label) = "cpu" }
  gpu_selector = { (local.pool_label) = "gpu", "nvidia.com/gpu.present" = "true" }

  pools = {
    cpu = {
      enabled        = true
      name           = "${local.prefix}-cpu"
      gpu            = false
      instance_types = var.cpu_node_group.instance_types
      min_size       = var.cpu_node_group.min_size
      max_size       = var.cpu_node_group.max_size
      desired_size   = var.cpu_node_group.desired_size
      disk_size_gb   = var.cpu_node_group.disk_size_gb
      labels         = local.cpu_selector
      taints         = slice(local.gpu_taints, 0, 0)
    }
    gpu = {
      enabled        = var.gpu_node_group.enabled
      name           = "${local.prefix}-gpu"
      gpu            = true
      instance_types = var.gpu_node_group.instance_types
      min_size       = var.gpu_node_group.min_size
      max_size       = var.gpu_node_group.max_size
      desired_size   = var.gpu_node_group.desired_size
      disk_size_gb   = var.gpu_node_group.disk_size_gb
      labels         = local.gpu_selector
      taints         = local.gpu_taints
    }
  }
  node_groups = tomap({
    for k, p in local.pools : k => {
      name           = p.name
      gpu            = p.gpu
      instance_types = p.instance_types
      min_size       = p.min_size
      max_size       = p.max_size
      desired_size   = p.desired_size
      disk_size_gb   = p.disk_size_gb
      labels         = tomap(p.labels)
      taints         = p.taints
    } if p.enabled
  })

  # ---- what is deployed -----------------------------------------------------------------------
  sql_catalog    = var.catalog.sql_uri != ""
  deploy_catalog = var.catalog.rest_uri == "" && !local.sql_catalog
  # postgresql+psycopg://USER@HOST:PORT/DB -> what Trino's JDBC catalog needs
  sql_parts = local.sql_catalog ? regex("^postgresql\\+psycopg://([^@]+)@(.+)$", var.catalog.sql_uri) : ["", ""]
  enabled_charts = {
    kuberay_operator     = var.ray.enabled || var.llm.provider == "rayService"
    nvidia_device_plugin = var.gpu_node_group.enabled
    catalog              = local.deploy_catalog
    trino                = var.trino.enabled
    milvus               = var.milvus.enabled
    lakeplanner          = true
  }

  # ---- workloads and their least-privilege storage grants ------------------------------------
  all_workloads = {
    lakeplanner = { enabled = true, service_account = var.name, access = "read-write", prefixes = [var.object_store.warehouse_prefix] }
    # Trino only serves lakeplanner's read-only user: ingest writes through pyiceberg, never through Trino.
    trino   = { enabled = var.trino.enabled, service_account = "trino", access = "read", prefixes = [var.object_store.warehouse_prefix] }
    catalog = { enabled = local.deploy_catalog, service_account = "nessie", access = "read-write", prefixes = [var.object_store.warehouse_prefix] }
    milvus  = { enabled = var.milvus.enabled, service_account = "milvus", access = "read-write", prefixes = [var.object_store.milvus_prefix] }
  }
  workloads = {
    for k, w in local.all_workloads : k => {
      service_account = w.service_account
      namespace       = var.namespace
      role_name       = "${local.prefix}-${k}"
      access          = w.access
      prefixes        = w.prefixes
    } if w.enabled
  }
  sa_annotations = { for k in keys(local.all_workloads) : k => lookup(var.workload_identity_annotations, k, {}) }

  # ---- endpoints ------------------------------------------------------------------------------
  catalog_uri = local.sql_catalog ? var.catalog.sql_uri : local.deploy_catalog ? "http://nessie.${local.ns_dns}:19120/iceberg" : var.catalog.rest_uri
  milvus_uri  = var.milvus.enabled ? "http://milvus.${local.ns_dns}:19530" : ""
  trino_host  = "trino.${local.ns_dns}"

  # ---- chart values ---------------------------------------------------------------------------
  kuberay_values = {
    nodeSelector = local.cpu_selector
    resources = {
      requests = { cpu = "100m", memory = "512Mi" }
      limits   = { cpu = "1", memory = "512Mi" }
    }
  }

  nvidia_device_plugin_values = {
    nodeSelector = local.gpu_selector
    tolerations  = local.gpu_toleration
  }

  catalog_values = merge({
    fullnameOverride = "nessie"
    versionStoreType = var.catalog.version_store
    serviceAccount = {
      create      = true
      name        = local.all_workloads.catalog.service_account
      annotations = local.sa_annotations.catalog
    }
    nodeSelector = local.cpu_selector
    catalog = {
      enabled = true
      iceberg = {
        defaultWarehouse = var.catalog.warehouse
        warehouses       = [{ name = var.catalog.warehouse, location = local.warehouse_uri }]
      }
      storage = {
        s3 = {
          defaultOptions = {
            region = var.object_store.region
            # Credentials come from the pod's workload identity, not from a static secret.
            authType = "APPLICATION_GLOBAL"
          }
        }
      }
    }
  }, var.catalog_version_store_values)

  trino_catalog_properties = merge(local.sql_catalog ? {
    "connector.name"                           = "iceberg"
    "iceberg.catalog.type"                     = "jdbc"
    "iceberg.jdbc-catalog.driver-class"        = "org.postgresql.Driver"
    "iceberg.jdbc-catalog.connection-url"      = "jdbc:postgresql://${local.sql_parts[1]}"
    "iceberg.jdbc-catalog.connection-user"     = local.sql_parts[0]
    "iceberg.jdbc-catalog.connection-password" = "$${ENV:ICEBERG_JDBC_PASSWORD}"
    # pyiceberg writes catalog rows under the catalog name `lake`
    "iceberg.jdbc-catalog.catalog-name"          = "lake"
    "iceberg.jdbc-catalog.default-warehouse-dir" = local.warehouse_uri
    } : {
    "connector.name"                                = "iceberg"
    "iceberg.catalog.type"                          = "rest"
    "iceberg.rest-catalog.uri"                      = local.catalog_uri
    "iceberg.rest-catalog.warehouse"                = local.warehouse_uri
    "iceberg.rest-catalog.nested-namespace-enabled" = "false"
  }, var.trino.object_store_properties)

  trino_rules = {
    catalogs = [
      { user = var.trino.admin_user, catalog = ".*", allow = "all" },
      { user = var.trino.user, catalog = var.trino.catalog, allow = "read-only" },
      { catalog = ".*", allow = "none" },
    ]
  }

  # the SQL catalog's password, from its Secret, in the environment each engine reads it from
  sql_password_env = { for name in ["PGPASSWORD", "ICEBERG_JDBC_PASSWORD"] : name => local.sql_catalog ? [{
    name      = name
    valueFrom = { secretKeyRef = { name = var.catalog.sql_password_secret, key = "password" } }
  }] : [] }

  trino_values = {
    server = { workers = var.trino.workers }
    env    = local.sql_password_env.ICEBERG_JDBC_PASSWORD
    serviceAccount = {
      create      = true
      name        = local.all_workloads.trino.service_account
      annotations = local.sa_annotations.trino
    }
    coordinator = { nodeSelector = local.cpu_selector }
    worker      = { nodeSelector = local.cpu_selector }
    catalogs = {
      (var.trino.catalog) = join("\n", [for k in sort(keys(local.trino_catalog_properties)) : "${k}=${local.trino_catalog_properties[k]}"])
      # The chart ships tpch and tpcds catalogs by default; null removes them.
      tpch  = null
      tpcds = null
    }
    accessControl = {
      type          = "configmap"
      refreshPeriod = "60s"
      configFile    = "rules.json"
      rules         = { "rules.json" = jsonencode(local.trino_rules) }
    }
  }

  milvus_cluster = var.milvus.mode == "cluster"
  milvus_values = {
    cluster  = { enabled = local.milvus_cluster }
    pulsarv3 = { enabled = local.milvus_cluster }
    etcd     = { replicaCount = local.milvus_cluster ? 3 : 1 }
    minio    = { enabled = false }
    externalS3 = {
      enabled       = true
      host          = var.object_store.endpoint
      port          = "443"
      useSSL        = true
      bucketName    = local.bucket_name
      rootPath      = var.object_store.milvus_prefix
      useIAM        = true
      cloudProvider = var.object_store.provider
      region        = var.object_store.region
    }
    serviceAccount = {
      create      = true
      name        = local.all_workloads.milvus.service_account
      annotations = local.sa_annotations.milvus
    }
    nodeSelector = local.cpu_selector
  }

  llm_values = {
    provider = var.llm.provider
    local    = { model = var.llm.provider == "local" ? var.llm.model : "default" }
    external = var.llm.provider == "external" ? { baseUrl = var.llm.base_url, model = var.llm.model } : null
    rayService = var.llm.provider == "rayService" ? {
      modelId = var.llm.model
      head    = { nodeSelector = local.cpu_selector, tolerations = [] }
      gpuWorkers = {
        gpusPerWorker = var.gpu_node_group.gpus_per_node
        nodeSelector  = local.gpu_selector
        tolerations   = local.gpu_toleration
      }
    } : null
  }

  gpu_workers = var.gpu_node_group.enabled && var.ray.gpu_workers_max > 0

  lakeplanner_values = {
    image        = { repository = var.lakeplanner.image_repository, tag = var.lakeplanner.image_tag }
    replicaCount = var.lakeplanner.replicas
    serviceAccount = {
      create      = true
      name        = local.all_workloads.lakeplanner.service_account
      annotations = local.sa_annotations.lakeplanner
    }
    nodeSelector = local.cpu_selector
    ingress = {
      enabled   = var.lakeplanner.ingress_host != ""
      className = var.lakeplanner.ingress_class
      hosts     = [{ host = var.lakeplanner.ingress_host != "" ? var.lakeplanner.ingress_host : "lakeplanner.example.com", paths = [{ path = "/", pathType = "Prefix" }] }]
    }
    lake = {
      persistence = {
        enabled      = true
        storageClass = var.lake_volume.storage_class
        accessModes  = var.lake_volume.access_modes
        size         = var.lake_volume.size
      }
    }
    iceberg     = { catalogUri = local.catalog_uri, warehouse = local.warehouse_uri }
    extraEnv    = local.sql_password_env.PGPASSWORD
    objectStore = { region = var.object_store.region }
    milvus      = { uri = local.milvus_uri }
    llm         = { for k, v in local.llm_values : k => v if v != null }
    execute = {
      mode         = var.ray.enabled ? "ray" : "serial"
      sqlEngine    = var.trino.enabled ? "trino" : "duckdb"
      otlpEndpoint = var.otlp_endpoint
    }
    trino = {
      host    = local.trino_host
      port    = 8080
      scheme  = "http"
      user    = var.trino.user
      catalog = var.trino.catalog
      schema  = var.trino.schema
    }
    ray = {
      enabled = var.ray.enabled
      head    = { nodeSelector = local.cpu_selector }
      cpuWorkers = {
        replicas     = var.ray.cpu_workers_min
        minReplicas  = var.ray.cpu_workers_min
        maxReplicas  = var.ray.cpu_workers_max
        nodeSelector = local.cpu_selector
      }
      gpuWorkers = {
        enabled       = local.gpu_workers
        replicas      = 0
        minReplicas   = 0
        maxReplicas   = local.gpu_workers ? var.ray.gpu_workers_max : 0
        gpusPerWorker = var.gpu_node_group.gpus_per_node
        nodeSelector  = local.gpu_selector
        tolerations   = local.gpu_toleration
      }
    }
  }
}
