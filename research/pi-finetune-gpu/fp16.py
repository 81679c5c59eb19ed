"""Halves the MiniLM checkpoint for the trip to the device (fp16 floats, integer buffers unchanged).

  python fp16.py M/model.safetensors .gpu/w16.safetensors
"""
import sys
import numpy as np
from safetensors.numpy import load_file, save_file

w = load_file(sys.argv[1])
save_file({k: (v.astype(np.float16) if v.dtype == np.float32 else v) for k, v in w.items()}, sys.argv[2])
