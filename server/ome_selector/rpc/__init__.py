"""The gRPC boundary: proto requests -> flows -> proto responses, and the servicers."""
