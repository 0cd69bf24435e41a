"""Generated from proto/hearts/v1 by scripts/gen_proto (package hearts.v1). Do not edit."""
