"""MedGround: grounded medical question answering."""

import os

# bm25s runs a JAX op when it is imported if JAX is installed. On a GPU machine that starts JAX's
# CUDA backend, which by default takes 75 % of the GPU's memory up front. The reader (transformers)
# and the embedders then run out of memory, and so does a second process on the same GPU. MedGround
# never computes with JAX, so JAX should allocate only what it uses. A value the user set is kept.
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
