# The lake directory (contract, plan cache, traces) is mounted by every API replica and Ray worker:
# a ReadWriteMany volume, here EFS through its CSI driver.
data "aws_subnet" "first" {
  id = var.subnet_ids[0]
}

resource "aws_efs_file_system" "lake" {
  creation_token   = "${local.prefix}-lake"
  encrypted        = true
  kms_key_id       = local.use_kms ? aws_kms_key.lake[0].arn : null
  performance_mode = "generalPurpose"
  throughput_mode  = "elastic"
  tags             = merge(local.tags, { Name = "${local.prefix}-lake" })
}

resource "aws_security_group" "efs" {
  name_prefix = "${local.prefix}-efs-"
  description = "NFS from the EKS cluster to the lake file system"
  vpc_id      = data.aws_subnet.first.vpc_id
  tags        = local.tags
}

resource "aws_vpc_security_group_ingress_rule" "efs_from_cluster" {
  security_group_id            = aws_security_group.efs.id
  description                  = "NFS from the EKS cluster's nodes and pods"
  referenced_security_group_id = aws_eks_cluster.this.vpc_config[0].cluster_security_group_id
  ip_protocol                  = "tcp"
  from_port                    = 2049
  to_port                      = 2049
}

resource "aws_efs_mount_target" "lake" {
  count = length(var.subnet_ids)

  file_system_id  = aws_efs_file_system.lake.id
  subnet_id       = var.subnet_ids[count.index]
  security_groups = [aws_security_group.efs.id]
}

data "aws_iam_policy_document" "efs_csi_trust" {
  statement {
    effect  = "Allow"
    actions = ["sts:AssumeRoleWithWebIdentity"]
    principals {
      type        = "Federated"
      identifiers = [aws_iam_openid_connect_provider.eks.arn]
    }
    condition {
      test     = "StringLike"
      variable = "${local.oidc_issuer}:sub"
      values   = ["system:serviceaccount:kube-system:efs-csi-*"]
    }
    condition {
      test     = "StringEquals"
      variable = "${local.oidc_issuer}:aud"
      values   = ["sts.amazonaws.com"]
    }
  }
}

resource "aws_iam_role" "efs_csi" {
  name               = "${local.prefix}-efs-csi"
  assume_role_policy = data.aws_iam_policy_document.efs_csi_trust.json
  tags               = local.tags
}

resource "aws_iam_role_policy_attachment" "efs_csi" {
  role       = aws_iam_role.efs_csi.name
  policy_arn = "arn:${data.aws_partition.current.partition}:iam::aws:policy/service-role/AmazonEFSCSIDriverPolicy"
}

resource "aws_eks_addon" "efs_csi" {
  cluster_name             = aws_eks_cluster.this.name
  addon_name               = "aws-efs-csi-driver"
  service_account_role_arn = aws_iam_role.efs_csi.arn
  tags                     = local.tags

  depends_on = [aws_eks_node_group.this]
}

resource "kubernetes_storage_class_v1" "lake" {
  metadata {
    name = module.plan.lake_volume.storage_class
  }
  storage_provisioner = "efs.csi.aws.com"
  reclaim_policy      = "Retain"
  parameters = {
    provisioningMode = "efs-ap"
    fileSystemId     = aws_efs_file_system.lake.id
    directoryPerms   = "700"
  }

  depends_on = [aws_eks_addon.efs_csi, aws_efs_mount_target.lake]
}
