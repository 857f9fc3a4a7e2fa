"""The selection engine: evaluate every runtime of a snapshot, rank the candidates, explain the rest."""
