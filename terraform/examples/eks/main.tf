provider "aws" {
  region = var.region
}

# Providers for the cluster made below; tokens come from the AWS CLI at each call.
provider "kubernetes" {
  host                   = module.lakeplanner.cluster_endpoint
  cluster_ca_certificate = base64decode(module.lakeplanner.cluster_certificate_authority_data)
  exec {
    api_version = "client.authentication.k8s.io/v1beta1"
    command     = "aws"
    args        = ["eks", "get-token", "--region", var.region, "--cluster-name", module.lakeplanner.cluster_name]
  }
}

provider "helm" {
  kubernetes = {
    host                   = module.lakeplanner.cluster_endpoint
    cluster_ca_certificate = base64decode(module.lakeplanner.cluster_certificate_authority_data)
    exec = {
      api_version = "client.authentication.k8s.io/v1beta1"
      command     = "aws"
      args        = ["eks", "get-token", "--region", var.region, "--cluster-name", module.lakeplanner.cluster_name]
    }
  }
}

data "aws_availability_zones" "available" {
  state = "available"
}

locals {
  azs = slice(data.aws_availability_zones.available.names, 0, 3)
}

module "vpc" {
  source  = "terraform-aws-modules/vpc/aws"
  version = "6.0.1"

  name               = "${var.name}-${var.environment}"
  cidr               = var.vpc_cidr
  azs                = local.azs
  private_subnets    = [for i, _ in local.azs : cidrsubnet(var.vpc_cidr, 4, i)]
  public_subnets     = [for i, _ in local.azs : cidrsubnet(var.vpc_cidr, 8, 48 + i)]
  enable_nat_gateway = true
  single_nat_gateway = true

  public_subnet_tags  = { "kubernetes.io/role/elb" = "1" }
  private_subnet_tags = { "kubernetes.io/role/internal-elb" = "1" }
}

module "lakeplanner" {
  source = "../.."

  name                                 = var.name
  environment                          = var.environment
  region                               = var.region
  subnet_ids                           = module.vpc.private_subnets
  cluster_endpoint_public_access_cidrs = var.admin_cidrs

  gpu_node_group = {
    enabled        = var.enable_gpu
    instance_types = var.gpu_instance_types
    min_size       = 0
    desired_size   = var.enable_gpu ? 1 : 0
    max_size       = 2
  }

  llm = var.enable_gpu ? {
    provider = "rayService"
    model    = "qwen2.5-coder-1.5b-instruct"
  } : { provider = "local" }

  lakeplanner = {
    image_tag    = var.lakeplanner_image_tag
    replicas     = 2
    ingress_host = var.ingress_host
  }

  tags = { "lakeplanner/example" = "eks" }
}
