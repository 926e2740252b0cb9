variable "region" {
  type        = string
  description = "AWS region."
  default     = "eu-west-1"

  validation {
    condition     = can(regex("^[a-z]{2}(-gov)?-[a-z]+-[0-9]$", var.region))
    error_message = "region must be an AWS region name such as eu-west-1."
  }
}

variable "name" {
  type        = string
  description = "Deployment name."
  default     = "lakeplanner"
}

variable "environment" {
  type        = string
  description = "Environment label."
  default     = "dev"
}

variable "vpc_cidr" {
  type        = string
  description = "CIDR of the VPC made for the cluster."
  default     = "10.40.0.0/16"

  validation {
    condition     = can(cidrhost(var.vpc_cidr, 0)) && tonumber(split("/", var.vpc_cidr)[1]) <= 20
    error_message = "vpc_cidr must be a CIDR of /20 or larger."
  }
}

variable "admin_cidrs" {
  type        = list(string)
  description = "CIDRs allowed to reach the Kubernetes API (your office or VPN); [] = private endpoint only."
  default     = []
}

variable "enable_gpu" {
  type        = bool
  description = "Add the tainted GPU node group and serve the LLM with vLLM on it (RayService)."
  default     = false
}

variable "gpu_instance_types" {
  type        = list(string)
  description = "GPU instance types (one NVIDIA GPU each by default)."
  default     = ["g6.xlarge"]
}

variable "lakeplanner_image_tag" {
  type        = string
  description = "lakeplanner image tag (\"\" = the chart's appVersion)."
  default     = ""
}

variable "ingress_host" {
  type        = string
  description = "Public host name of the API (\"\" = no Ingress)."
  default     = ""
}
