// kube-controller-manager, as upstream's cmd/kube-controller-manager builds it, with one test knob:
// JOBGUARD_JOB_POD_FAILURE_BACKOFF (a Go duration) shortens the job controller's pod failure
// back-off, as upstream's own job integration tests do, so failed-pod scenarios do not wait 10 s.
package main

import (
	"fmt"
	"os"
	"time"
	_ "time/tzdata" // for CronJob time zone support

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"
	"k8s.io/kubernetes/cmd/kube-controller-manager/app"
	"k8s.io/kubernetes/pkg/controller/job"
)

func main() {
	if value := os.Getenv("JOBGUARD_JOB_POD_FAILURE_BACKOFF"); value != "" {
		backoff, err := time.ParseDuration(value)
		if err != nil || backoff <= 0 {
			fmt.Fprintf(os.Stderr, "JOBGUARD_JOB_POD_FAILURE_BACKOFF=%q: want a positive Go duration such as 100ms\n", value)
			os.Exit(2)
		}
		job.DefaultJobPodFailureBackOff = backoff
	}
	os.Exit(cli.Run(app.NewControllerManagerCommand()))
}
