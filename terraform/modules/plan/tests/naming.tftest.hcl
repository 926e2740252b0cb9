variables {
  name        = "lakeplanner"
  environment = "staging"
  object_store = {
    region        = "us-east-1"
    endpoint      = "s3.us-east-1.amazonaws.com"
    bucket_suffix = "123456789012"
  }
}

run "derived_names_are_valid" {
  command = plan

  assert {
    condition     = output.bucket_name == "lakeplanner-staging-lake-123456789012"
    error_message = "The bucket name is NAME-ENV-lake-SUFFIX."
  }

  assert {
    condition     = can(regex("^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$", output.bucket_name))
    error_message = "The bucket name must be a valid S3 bucket name."
  }

  assert {
    condition     = output.warehouse_uri == "s3://lakeplanner-staging-lake-123456789012/warehouse"
    error_message = "The warehouse is s3://BUCKET/warehouse."
  }

  assert {
    condition     = alltrue([for w in values(output.workloads) : can(regex("^[A-Za-z0-9+=,.@_-]{1,64}$", w.role_name))])
    error_message = "Every role name must be a valid IAM role name."
  }

  assert {
    condition     = output.workloads.lakeplanner.role_name == "lakeplanner-staging-lakeplanner" && output.cluster_name == "lakeplanner-staging"
    error_message = "Role and cluster names are NAME-ENV[-WORKLOAD]."
  }
}

run "explicit_bucket_name_wins" {
  command = plan

  variables {
    object_store = {
      bucket_name = "my-lake"
      region      = "us-east-1"
      endpoint    = "s3.us-east-1.amazonaws.com"
    }
  }

  assert {
    condition     = output.bucket_name == "my-lake" && output.chart_values.milvus.externalS3.bucketName == "my-lake"
    error_message = "An explicit bucket name is used everywhere."
  }
}

run "least_privilege_grants" {
  command = plan

  assert {
    condition     = output.workloads.trino.access == "read" && output.workloads.trino.prefixes == ["warehouse"]
    error_message = "Trino may only read the warehouse prefix."
  }

  assert {
    condition     = output.workloads.lakeplanner.access == "read-write" && output.workloads.lakeplanner.prefixes == ["warehouse"]
    error_message = "lakeplanner writes the warehouse prefix only."
  }

  assert {
    condition     = output.workloads.milvus.prefixes == ["milvus"] && !contains(output.workloads.milvus.prefixes, "warehouse")
    error_message = "Milvus gets its own prefix, not the warehouse."
  }

  assert {
    condition     = alltrue([for w in values(output.workloads) : w.namespace == "lakeplanner"])
    error_message = "Every workload identity is bound to the namespace."
  }
}

run "external_catalog_skips_nessie" {
  command = plan

  variables {
    catalog     = { rest_uri = "https://catalog.example.com/iceberg" }
    milvus      = { enabled = false }
    lakeplanner = { replicas = 1 }
  }

  assert {
    condition     = !output.enabled_charts.catalog && !contains(keys(output.workloads), "catalog")
    error_message = "An external REST catalog means no Nessie release and no catalog role."
  }

  assert {
    condition     = !output.enabled_charts.milvus && !contains(keys(output.workloads), "milvus") && output.chart_values.lakeplanner.milvus.uri == ""
    error_message = "Milvus disabled: no release, no role, Milvus Lite in lakeplanner."
  }

  assert {
    condition     = output.chart_values.lakeplanner.iceberg.catalogUri == "https://catalog.example.com/iceberg"
    error_message = "lakeplanner must use the external catalog."
  }
}

run "longest_inputs_still_give_valid_names" {
  command = plan

  variables {
    name         = "abcdefghijklmnopqrst"
    environment  = "abcdefghij"
    object_store = { bucket_suffix = "abcdefghijklmnopqrst", region = "eu-west-1", endpoint = "s3.eu-west-1.amazonaws.com" }
  }

  assert {
    condition     = length(output.bucket_name) <= 63
    error_message = "The longest name, environment and suffix must still give a bucket name of at most 63 characters."
  }

  assert {
    condition     = alltrue([for w in values(output.workloads) : length(w.role_name) <= 64])
    error_message = "The longest name and environment must still give IAM role names of at most 64 characters."
  }

  assert {
    condition     = alltrue([for g in values(output.node_groups) : length(g.name) <= 63])
    error_message = "Node group names must stay within 63 characters."
  }
}
