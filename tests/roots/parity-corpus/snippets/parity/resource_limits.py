import resource

# RLIMIT_DATA is the run's memory limit: a documented difference.
for name in sorted(n for n in dir(resource) if n.startswith("RLIMIT_") and n != "RLIMIT_DATA"):
    print(name, resource.getrlimit(getattr(resource, name)))
