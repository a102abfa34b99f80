import json

print(json.__file__)
