locals {
  charts = module.plan.enabled_charts
  values = module.plan.chart_values
}

resource "kubernetes_namespace_v1" "lakeplanner" {
  metadata {
    name = module.plan.namespace
    labels = {
      "app.kubernetes.io/part-of"          = "lakeplanner"
      "pod-security.kubernetes.io/enforce" = "baseline"
    }
  }

  depends_on = [aws_eks_node_group.this]
}

resource "helm_release" "kuberay_operator" {
  count = local.charts.kuberay_operator ? 1 : 0

  name             = "kuberay-operator"
  namespace        = "kuberay-system"
  create_namespace = true
  repository       = "https://ray-project.github.io/kuberay-helm/"
  chart            = "kuberay-operator"
  version          = module.plan.chart_versions.kuberay_operator
  values           = [yamlencode(local.values.kuberay_operator)]

  depends_on = [aws_eks_node_group.this]
}

resource "helm_release" "nvidia_device_plugin" {
  count = local.charts.nvidia_device_plugin ? 1 : 0

  name             = "nvidia-device-plugin"
  namespace        = "nvidia-device-plugin"
  create_namespace = true
  repository       = "https://nvidia.github.io/k8s-device-plugin"
  chart            = "nvidia-device-plugin"
  version          = module.plan.chart_versions.nvidia_device_plugin
  values           = [yamlencode(local.values.nvidia_device_plugin)]

  depends_on = [aws_eks_node_group.this]
}

resource "helm_release" "catalog" {
  count = local.charts.catalog ? 1 : 0

  name       = "nessie"
  namespace  = kubernetes_namespace_v1.lakeplanner.metadata[0].name
  repository = "https://charts.projectnessie.org"
  chart      = "nessie"
  version    = module.plan.chart_versions.nessie
  values     = [yamlencode(local.values.catalog)]

  depends_on = [aws_iam_role_policy.workload, aws_eks_addon.ebs_csi]
}

resource "helm_release" "trino" {
  count = local.charts.trino ? 1 : 0

  name       = "trino"
  namespace  = kubernetes_namespace_v1.lakeplanner.metadata[0].name
  repository = "https://trinodb.github.io/charts"
  chart      = "trino"
  version    = module.plan.chart_versions.trino
  values     = [yamlencode(local.values.trino)]

  depends_on = [aws_iam_role_policy.workload, helm_release.catalog]
}

resource "helm_release" "milvus" {
  count = local.charts.milvus ? 1 : 0

  name       = "milvus"
  namespace  = kubernetes_namespace_v1.lakeplanner.metadata[0].name
  repository = "https://zilliztech.github.io/milvus-helm/"
  chart      = "milvus"
  version    = module.plan.chart_versions.milvus
  values     = [yamlencode(local.values.milvus)]
  timeout    = 900

  depends_on = [aws_iam_role_policy.workload, aws_eks_addon.ebs_csi]
}

resource "helm_release" "lakeplanner" {
  name       = "lakeplanner"
  namespace  = kubernetes_namespace_v1.lakeplanner.metadata[0].name
  repository = var.lakeplanner_chart_repository != "" ? var.lakeplanner_chart_repository : null
  chart      = var.lakeplanner_chart != "" ? var.lakeplanner_chart : "${path.module}/../helm/lakeplanner"
  # Helm ignores the version of a chart read from a local path; it pins the repository chart.
  version = module.plan.chart_versions.lakeplanner
  values  = [yamlencode(local.values.lakeplanner), yamlencode(var.lakeplanner_extra_values)]
  timeout = 900

  depends_on = [
    aws_iam_role_policy.workload,
    aws_eks_addon.ebs_csi,
    kubernetes_storage_class_v1.lake,
    helm_release.kuberay_operator,
    helm_release.catalog,
    helm_release.trino,
    helm_release.milvus,
  ]
}
