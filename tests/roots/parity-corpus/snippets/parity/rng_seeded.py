import random

import numpy
import torch

random.seed(1)
numpy.random.seed(1)
torch.manual_seed(1)
print(random.random(), numpy.random.rand(), torch.rand(2).tolist())
print(torch.initial_seed())
