"""Pure flows over a frozen snapshot: selection, admission, reconcile, revisions, views, the tree, watch outcomes."""
