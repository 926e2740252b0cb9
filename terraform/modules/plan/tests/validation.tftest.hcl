variables {
  name        = "lp"
  environment = "dev"
  object_store = {
    region   = "eu-west-1"
    endpoint = "s3.eu-west-1.amazonaws.com"
  }
}

run "rejects_bad_name" {
  command = plan
  variables {
    name = "LakePlanner_"
  }
  expect_failures = [var.name]
}

run "rejects_bad_environment" {
  command = plan
  variables {
    environment = "prod-eu-west"
  }
  expect_failures = [var.environment]
}

run "rejects_bad_namespace" {
  command = plan
  variables {
    namespace = "Lake_Planner"
  }
  expect_failures = [var.namespace]
}

run "rejects_inverted_cpu_sizes" {
  command = plan
  variables {
    cpu_node_group = { instance_types = ["m6i.large"], min_size = 4, max_size = 2, desired_size = 3 }
  }
  expect_failures = [var.cpu_node_group]
}

run "rejects_gpu_group_without_capacity" {
  command = plan
  variables {
    gpu_node_group = { enabled = true, max_size = 0 }
  }
  expect_failures = [var.gpu_node_group]
}

run "rejects_overlapping_prefixes" {
  command = plan
  variables {
    object_store = {
      region           = "eu-west-1"
      endpoint         = "s3.eu-west-1.amazonaws.com"
      warehouse_prefix = "data"
      milvus_prefix    = "data/milvus"
    }
  }
  expect_failures = [var.object_store]
}

run "rejects_bad_bucket_name" {
  command = plan
  variables {
    object_store = { bucket_name = "My_Bucket", region = "eu-west-1", endpoint = "s3.eu-west-1.amazonaws.com" }
  }
  expect_failures = [var.object_store]
}

run "rejects_unknown_milvus_mode" {
  command = plan
  variables {
    milvus = { mode = "distributed" }
  }
  expect_failures = [var.milvus]
}

run "rejects_unknown_llm_provider" {
  command = plan
  variables {
    llm = { provider = "bedrock" }
  }
  expect_failures = [var.llm]
}

run "rejects_external_llm_without_url" {
  command = plan
  variables {
    llm = { provider = "external", model = "gpt-4o-mini" }
  }
  expect_failures = [var.llm]
}

run "rejects_rayservice_without_gpus" {
  command = plan
  variables {
    llm = { provider = "rayService", model = "qwen" }
  }
  expect_failures = [output.chart_values]
}

run "rejects_same_trino_users" {
  command = plan
  variables {
    trino = { user = "admin" }
  }
  expect_failures = [var.trino]
}

run "rejects_bad_catalog_uri" {
  command = plan
  variables {
    catalog = { rest_uri = "thrift://metastore:9083" }
  }
  expect_failures = [var.catalog]
}

run "rejects_chart_version_range" {
  command = plan
  variables {
    chart_versions = { trino = "~> 1.39" }
  }
  expect_failures = [var.chart_versions]
}

run "rejects_unknown_identity_workload" {
  command = plan
  variables {
    workload_identity_annotations = { spark = { "eks.amazonaws.com/role-arn" = "arn:aws:iam::1:role/x" } }
  }
  expect_failures = [var.workload_identity_annotations]
}

run "rejects_aws_store_without_region" {
  command = plan
  variables {
    object_store = { provider = "aws" }
  }
  expect_failures = [output.chart_values]
}

run "rejects_shared_lake_on_rwo_volume" {
  command = plan
  variables {
    lake_volume = { access_modes = ["ReadWriteOnce"] }
  }
  expect_failures = [output.chart_values]
}
