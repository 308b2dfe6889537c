"""Dynamic Resource Allocation helpers shared by the API server, the scheduler, the controllers and the
printers: CEL device selectors and how a pod names its claims."""
