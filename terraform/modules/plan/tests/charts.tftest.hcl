variables {
  name        = "lp"
  environment = "dev"
  namespace   = "lake"
  object_store = {
    region        = "eu-west-1"
    endpoint      = "s3.eu-west-1.amazonaws.com"
    bucket_suffix = "111122223333"
  }
  catalog = { version_store = "DYNAMODB2" }
  workload_identity_annotations = {
    lakeplanner = { "eks.amazonaws.com/role-arn" = "arn:aws:iam::111122223333:role/lp-dev-lakeplanner" }
    trino       = { "eks.amazonaws.com/role-arn" = "arn:aws:iam::111122223333:role/lp-dev-trino" }
  }
  trino = {
    object_store_properties = { "fs.native-s3.enabled" = "true", "s3.region" = "eu-west-1" }
  }
}

run "trino_iceberg_catalog" {
  command = plan

  assert {
    condition = alltrue([
      for line in [
        "connector.name=iceberg",
        "iceberg.catalog.type=rest",
        "iceberg.rest-catalog.uri=http://nessie.lake.svc.cluster.local:19120/iceberg",
        "iceberg.rest-catalog.warehouse=s3://lp-dev-lake-111122223333/warehouse",
        "s3.region=eu-west-1",
      ] : contains(split("\n", output.chart_values.trino.catalogs.iceberg), line)
    ])
    error_message = "Trino's iceberg catalog must point at the REST catalog and the object store."
  }

  assert {
    condition     = output.chart_values.trino.catalogs.tpch == null && output.chart_values.trino.catalogs.tpcds == null
    error_message = "The chart's sample catalogs are removed."
  }

  assert {
    condition     = output.chart_values.trino.serviceAccount.annotations["eks.amazonaws.com/role-arn"] == "arn:aws:iam::111122223333:role/lp-dev-trino"
    error_message = "Trino's service account carries its workload identity."
  }
}

run "trino_lakeplanner_user_read_only" {
  command = plan

  assert {
    condition     = output.chart_values.trino.accessControl.type == "configmap"
    error_message = "File-based access control through the chart's configmap."
  }

  assert {
    condition = contains(
      jsondecode(output.chart_values.trino.accessControl.rules["rules.json"]).catalogs,
      { user = "lakeplanner", catalog = "iceberg", allow = "read-only" }
    )
    error_message = "lakeplanner's Trino user must be read-only on the iceberg catalog."
  }

  assert {
    condition     = [for r in jsondecode(output.chart_values.trino.accessControl.rules["rules.json"]).catalogs : r.allow if !can(r.user)] == ["none"]
    error_message = "Every other user and catalog falls through to allow = none."
  }

  assert {
    condition = length([
      for r in jsondecode(output.chart_values.trino.accessControl.rules["rules.json"]).catalogs : r
      if try(r.user, "") == "lakeplanner" && r.allow != "read-only"
    ]) == 0
    error_message = "No rule may grant lakeplanner more than read-only."
  }
}

run "lakeplanner_values" {
  command = plan

  assert {
    condition = (
      output.chart_values.lakeplanner.iceberg.catalogUri == "http://nessie.lake.svc.cluster.local:19120/iceberg" &&
      output.chart_values.lakeplanner.iceberg.warehouse == "s3://lp-dev-lake-111122223333/warehouse"
    )
    error_message = "lakeplanner must use the same catalog and warehouse as Trino."
  }

  assert {
    condition = (
      output.chart_values.lakeplanner.trino.user == "lakeplanner" &&
      output.chart_values.lakeplanner.trino.host == "trino.lake.svc.cluster.local" &&
      output.chart_values.lakeplanner.execute.sqlEngine == "trino"
    )
    error_message = "lakeplanner runs its SQL on Trino as the read-only user."
  }

  assert {
    condition     = output.chart_values.lakeplanner.lake.persistence.accessModes == tolist(["ReadWriteMany"]) && output.chart_values.lakeplanner.lake.persistence.storageClass == "lakeplanner-lake"
    error_message = "Replicas and Ray workers share the lake directory on a ReadWriteMany volume."
  }

  assert {
    condition     = output.chart_values.lakeplanner.milvus.uri == "http://milvus.lake.svc.cluster.local:19530"
    error_message = "lakeplanner must use the Milvus server."
  }

  assert {
    condition     = output.chart_values.lakeplanner.serviceAccount.annotations["eks.amazonaws.com/role-arn"] == "arn:aws:iam::111122223333:role/lp-dev-lakeplanner"
    error_message = "lakeplanner's service account carries its workload identity."
  }

  assert {
    condition     = output.chart_values.lakeplanner.serviceAccount.name == output.workloads.lakeplanner.service_account
    error_message = "The role trust and the chart must name the same service account."
  }
}

run "catalog_values" {
  command = plan

  assert {
    condition = (
      output.chart_values.catalog.catalog.enabled &&
      output.chart_values.catalog.versionStoreType == "DYNAMODB2" &&
      output.chart_values.catalog.catalog.iceberg.warehouses[0].location == "s3://lp-dev-lake-111122223333/warehouse"
    )
    error_message = "Nessie serves the Iceberg REST API over the warehouse prefix."
  }

  assert {
    condition     = output.chart_values.catalog.serviceAccount.name == output.workloads.catalog.service_account
    error_message = "The catalog's role trust and chart must name the same service account."
  }
}

run "milvus_standalone" {
  command = plan

  assert {
    condition = (
      !output.chart_values.milvus.cluster.enabled &&
      !output.chart_values.milvus.pulsarv3.enabled &&
      output.chart_values.milvus.etcd.replicaCount == 1 &&
      !output.chart_values.milvus.minio.enabled &&
      output.chart_values.milvus.externalS3.rootPath == "milvus" &&
      output.chart_values.milvus.externalS3.useIAM
    )
    error_message = "Standalone Milvus: no Pulsar, one etcd, S3 through IAM under its prefix."
  }
}

run "milvus_cluster" {
  command = plan

  variables {
    milvus = { mode = "cluster" }
  }

  assert {
    condition     = output.chart_values.milvus.cluster.enabled && output.chart_values.milvus.pulsarv3.enabled && output.chart_values.milvus.etcd.replicaCount == 3
    error_message = "Cluster Milvus: Pulsar and three etcd replicas."
  }
}

run "external_llm" {
  command = plan

  variables {
    llm = { provider = "external", base_url = "https://api.openai.com/v1", model = "gpt-4o-mini" }
  }

  assert {
    condition     = output.chart_values.lakeplanner.llm.provider == "external" && output.chart_values.lakeplanner.llm.external.baseUrl == "https://api.openai.com/v1"
    error_message = "An external endpoint is passed to the chart."
  }

  assert {
    condition     = !contains(keys(output.chart_values.lakeplanner.llm), "rayService")
    error_message = "No RayService values without the rayService provider."
  }
}

run "no_ray_no_operator" {
  command = plan

  variables {
    ray = { enabled = false }
  }

  assert {
    condition     = !output.enabled_charts.kuberay_operator && output.chart_values.lakeplanner.execute.mode == "serial"
    error_message = "Without Ray (and no RayService) the operator is not installed and plans run serially."
  }
}

run "a_postgresql_catalog_is_shared_by_lakeplanner_and_trino" {
  command = plan
  variables {
    catalog = { sql_uri = "postgresql+psycopg://lake@pg.data:5432/iceberg", sql_password_secret = "lake-catalog" }
  }

  assert {
    condition     = !output.enabled_charts.catalog && output.endpoints.catalog_uri == "postgresql+psycopg://lake@pg.data:5432/iceberg"
    error_message = "A PostgreSQL catalog deploys no Nessie; lakeplanner reads it at sql_uri."
  }

  assert {
    condition = alltrue([
      for line in [
        "iceberg.catalog.type=jdbc",
        "iceberg.jdbc-catalog.connection-url=jdbc:postgresql://pg.data:5432/iceberg",
        "iceberg.jdbc-catalog.connection-user=lake",
        "iceberg.jdbc-catalog.connection-password=$${ENV:ICEBERG_JDBC_PASSWORD}",
        "iceberg.jdbc-catalog.catalog-name=lake",
      ] : contains(split("\n", output.chart_values.trino.catalogs.iceberg), line)
    ])
    error_message = "Trino reads the same catalog through Iceberg's JDBC catalog, under the catalog name pyiceberg writes."
  }

  assert {
    condition = (
      output.chart_values.lakeplanner.extraEnv[0].name == "PGPASSWORD"
      && output.chart_values.lakeplanner.extraEnv[0].valueFrom.secretKeyRef.name == "lake-catalog"
      && output.chart_values.trino.env[0].name == "ICEBERG_JDBC_PASSWORD"
    )
    error_message = "The password reaches both from the Secret, never through the values."
  }
}

run "rejects_a_password_in_the_sql_uri" {
  command = plan
  variables {
    catalog = { sql_uri = "postgresql+psycopg://lake:secret@pg.data:5432/iceberg", sql_password_secret = "lake-catalog" }
  }
  expect_failures = [var.catalog]
}
