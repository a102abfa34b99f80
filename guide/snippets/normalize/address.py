marker = object()
print(marker)
