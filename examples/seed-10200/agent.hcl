# The seed's repro of Nomad #10200, for `berth agent -dev -config agent.hcl`: preemption on for
# service jobs, and a node small enough that three `lo` allocs fill it.
ports {
  http = 4646
}

client {
  cpu_total_compute = 1000
  memory_total_mb   = 2048
  reserved {
    cpu    = 0
    memory = 0
  }
}

server {
  default_scheduler_config {
    preemption_config {
      service_scheduler_enabled = true
    }
  }
}
