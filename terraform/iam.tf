# IRSA: one role per workload, assumable only by its own service account, allowed only its own bucket prefixes.
locals {
  oidc_issuer = replace(aws_iam_openid_connect_provider.eks.url, "https://", "")
  s3_read     = ["s3:GetObject", "s3:GetObjectVersion"]
  s3_write    = ["s3:PutObject", "s3:DeleteObject", "s3:AbortMultipartUpload", "s3:ListMultipartUploadParts"]
}

data "aws_iam_policy_document" "workload_trust" {
  for_each = module.plan.workloads

  statement {
    effect  = "Allow"
    actions = ["sts:AssumeRoleWithWebIdentity"]
    principals {
      type        = "Federated"
      identifiers = [aws_iam_openid_connect_provider.eks.arn]
    }
    condition {
      test     = "StringEquals"
      variable = "${local.oidc_issuer}:sub"
      values   = ["system:serviceaccount:${each.value.namespace}:${each.value.service_account}"]
    }
    condition {
      test     = "StringEquals"
      variable = "${local.oidc_issuer}:aud"
      values   = ["sts.amazonaws.com"]
    }
  }
}

data "aws_iam_policy_document" "workload" {
  for_each = module.plan.workloads

  statement {
    sid       = "ListOwnPrefixes"
    effect    = "Allow"
    actions   = ["s3:ListBucket"]
    resources = [aws_s3_bucket.lake.arn]
    condition {
      test     = "StringLike"
      variable = "s3:prefix"
      values   = flatten([for p in each.value.prefixes : [p, "${p}/*"]])
    }
  }

  statement {
    sid       = "BucketLocation"
    effect    = "Allow"
    actions   = ["s3:GetBucketLocation"]
    resources = [aws_s3_bucket.lake.arn]
  }

  statement {
    sid       = "Objects"
    effect    = "Allow"
    actions   = each.value.access == "read-write" ? concat(local.s3_read, local.s3_write) : local.s3_read
    resources = [for p in each.value.prefixes : "${aws_s3_bucket.lake.arn}/${p}/*"]
  }

  dynamic "statement" {
    for_each = local.use_kms ? [1] : []
    content {
      sid       = "LakeKey"
      effect    = "Allow"
      actions   = each.value.access == "read-write" ? ["kms:Decrypt", "kms:GenerateDataKey", "kms:Encrypt"] : ["kms:Decrypt"]
      resources = [aws_kms_key.lake[0].arn]
    }
  }

  dynamic "statement" {
    for_each = each.key == "catalog" && var.catalog.version_store == "DYNAMODB2" ? [1] : []
    content {
      sid    = "NessieVersionStore"
      effect = "Allow"
      actions = [
        "dynamodb:CreateTable", "dynamodb:DescribeTable", "dynamodb:GetItem", "dynamodb:BatchGetItem",
        "dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:BatchWriteItem",
        "dynamodb:Query", "dynamodb:Scan", "dynamodb:ConditionCheckItem",
      ]
      resources = ["arn:${data.aws_partition.current.partition}:dynamodb:${var.region}:${data.aws_caller_identity.current.account_id}:table/${local.dynamodb_table_prefix}_*"]
    }
  }
}

resource "aws_iam_role" "workload" {
  for_each = module.plan.workloads

  name               = each.value.role_name
  assume_role_policy = data.aws_iam_policy_document.workload_trust[each.key].json
  tags               = local.tags
}

resource "aws_iam_role_policy" "workload" {
  for_each = module.plan.workloads

  name   = "${each.value.role_name}-lake"
  role   = aws_iam_role.workload[each.key].id
  policy = data.aws_iam_policy_document.workload[each.key].json
}

data "aws_iam_policy_document" "ebs_csi_trust" {
  statement {
    effect  = "Allow"
    actions = ["sts:AssumeRoleWithWebIdentity"]
    principals {
      type        = "Federated"
      identifiers = [aws_iam_openid_connect_provider.eks.arn]
    }
    condition {
      test     = "StringEquals"
      variable = "${local.oidc_issuer}:sub"
      values   = ["system:serviceaccount:kube-system:ebs-csi-controller-sa"]
    }
    condition {
      test     = "StringEquals"
      variable = "${local.oidc_issuer}:aud"
      values   = ["sts.amazonaws.com"]
    }
  }
}

resource "aws_iam_role" "ebs_csi" {
  name               = "${local.prefix}-ebs-csi"
  assume_role_policy = data.aws_iam_policy_document.ebs_csi_trust.json
  tags               = local.tags
}

resource "aws_iam_role_policy_attachment" "ebs_csi" {
  role       = aws_iam_role.ebs_csi.name
  policy_arn = "arn:${data.aws_partition.current.partition}:iam::aws:policy/service-role/AmazonEBSCSIDriverPolicy"
}
