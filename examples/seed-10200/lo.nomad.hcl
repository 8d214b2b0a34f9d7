# Three low-priority allocs that fill the node (3 x 300 MHz of 1000).
job "lo" {
  priority = 50

  group "lo" {
    count = 3

    task "sleep" {
      driver = "raw_exec"

      config {
        command = "/bin/sh"
        args    = ["-c", "echo lo $NOMAD_ALLOC_INDEX running; trap 'echo lo stopping; exit 0' TERM INT; while :; do sleep 1; done"]
      }

      kill_timeout = "2s"

      resources {
        cpu    = 300
        memory = 64
      }
    }
  }
}
