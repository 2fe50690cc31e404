"""What talks to a cluster: the kubernetes client (`client`), `jobguard audit` and the
background audit (`audit`), PolicyReports (`policy_reports`), the cluster commands
(`commands`)."""
