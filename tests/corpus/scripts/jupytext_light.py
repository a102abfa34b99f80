# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: light
#       format_version: '1.5'
#       jupytext_version: 1.16.4
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# # A notebook kept in the light format
#
# A paragraph of comments is a Markdown cell; a code cell with a blank line
# inside it needs explicit `# +` and `# -` markers.

values = [4, 8, 15]
len(values)

# +
doubled = [2 * v for v in values]

print(doubled)
# -

# ## The last cell
#
# Markdown again, then code.

max(doubled)
