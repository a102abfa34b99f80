import sys

print("<script>window.__pwned=1</script>")
print('<img src="/pwned.png" onerror="window.__pwned=2">', file=sys.stderr)
