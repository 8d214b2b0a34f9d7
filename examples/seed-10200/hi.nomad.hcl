# One high-priority alloc that needs 500 MHz: only 100 are free, so two `lo` allocs are evicted.
# Its runner waits for both victims, one watcher per evicted alloc, each watching its own id.
job "hi" {
  priority = 100

  group "hi" {
    task "sleep" {
      driver = "raw_exec"

      config {
        command = "/bin/sh"
        args    = ["-c", "echo hi running; trap 'exit 0' TERM INT; while :; do sleep 1; done"]
      }

      kill_timeout = "2s"

      resources {
        cpu    = 500
        memory = 64
      }
    }
  }
}
