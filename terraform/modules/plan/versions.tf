# Provider-free on purpose: only variables, locals and outputs, so `terraform test` runs it offline.
terraform {
  required_version = ">= 1.6.0, < 2.0.0"
}
