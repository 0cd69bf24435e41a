"""Generated from proto/hearts/v1 by scripts/gen_proto. Do not edit."""
