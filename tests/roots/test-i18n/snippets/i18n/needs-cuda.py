print("measured on a GPU: 12.5 MiB")

# /// snipcheck
# requires = ["cuda"]
# ///
