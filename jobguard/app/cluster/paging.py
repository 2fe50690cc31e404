"""How the audit pages its lists, in a module of its own: the argument parser and the chart's
defaults name these without importing the kubernetes client."""

from __future__ import annotations

DEFAULT_PAGE_SIZE = 100
"""Objects per list request (`jobguard audit --page-size`, `serve --audit-page-size`, the
chart's `audit.pageSize` when unset): 100 ordinary Jobs list as about 0.5 MiB of JSON, under
PAGE_BYTES, so a cluster of ordinary Jobs is never asked a page twice."""

PAGE_BYTES = 2 * 1024 * 1024
"""The most JSON a list page of more than one object may hold (a larger one is asked again with
half as many objects): decoded, a byte of JSON costs up to 28 bytes (the budget's DECODED_COST),
so a page costs the audit at most about 60 MiB. A single object larger than this is still read
alone (`client.MAX_ANSWER_BYTES`): a Job near etcd's 1.5 MiB limit lists as up to 3 MiB. In
`serve` each page's cost is held from the request bodies' budget before it is decoded
(`Cluster.page_memory`), so the audit and the largest body are never decoded together."""
