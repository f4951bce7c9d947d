"""A site's nodes: the platform description, placement, downtime and the machine of nodes.

``from sitesim.platform import Platform`` (:mod:`sitesim.platform.description`)."""

from sitesim.platform.description import Platform

__all__ = ["Platform"]
