"""A site's nodes: the platform description, placement, downtime and the machine of nodes."""
