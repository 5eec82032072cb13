"""Topology on networkx: servers, Active Directory sites, DAGs, routing groups and link costs.

Sites (and routing groups, for the Exchange 2003 public folder model) are nodes of a weighted graph;
the transport cost between two servers is the shortest-path cost between their routing groups, 0 inside
one routing group (seed 003, "Backfill Requests and Backfill Messages": servers in the same routing group
come first). A server's transport high-availability boundary is its DAG, or its Active Directory site if
it is not in a DAG (seed 000, "Shadow redundancy components").
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Server:
    name: str
    site: str
    dag: str | None = None
    routing_group: str | None = None  # defaults to the site
    version: str = "2013"
    role: str = "mailbox"

    @property
    def group(self) -> str:
        return self.routing_group or self.site


class TopologyError(ValueError):
    pass


class Topology:
    """Servers and the weighted graph of the sites/routing groups that connect them.

    `__fixed__` (issue 33, session 14): built once with the system and never changed by a step (`add_server` is
    a provisioning call no model step makes), so every explored state shares it (`conformance.explore.fixed`,
    which checks it at the end of a search)."""

    __fixed__ = True

    def __init__(self, servers: Iterable[Server], links: Iterable[tuple[str, str, int]] = ()) -> None:
        self.servers: dict[str, Server] = {}
        for s in servers:
            if s.name in self.servers:
                raise TopologyError(f"duplicate server {s.name!r}")
            self.servers[s.name] = s
        import networkx as nx  # imported here: a check builds no topology and need not load it (issue 32)

        self.graph = nx.Graph()
        for s in self.servers.values():
            self.graph.add_node(s.group)
        for a, b, cost in links:
            if cost < 0:
                raise TopologyError(f"link {a}-{b} has negative cost {cost}")
            self.graph.add_edge(a, b, cost=int(cost))
        self._cost = dict(nx.all_pairs_dijkstra_path_length(self.graph, weight="cost"))

    def add_server(self, server: Server) -> None:
        """Provision a new server (for example a new public folder store) into an existing site."""
        if server.name in self.servers:
            raise TopologyError(f"duplicate server {server.name!r}")
        self.servers[server.name] = server
        if server.group not in self.graph:
            import networkx as nx

            self.graph.add_node(server.group)
            self._cost = dict(nx.all_pairs_dijkstra_path_length(self.graph, weight="cost"))

    def names(self) -> list[str]:
        return sorted(self.servers)

    def server(self, name: str) -> Server:
        try:
            return self.servers[name]
        except KeyError:
            raise TopologyError(f"unknown server {name!r}") from None

    def sites(self) -> list[str]:
        return sorted({s.site for s in self.servers.values()})

    def dags(self) -> list[str]:
        return sorted({s.dag for s in self.servers.values() if s.dag})

    def dag_members(self, dag: str) -> list[str]:
        return sorted(n for n, s in self.servers.items() if s.dag == dag)

    def dag_spans_sites(self, dag: str) -> bool:
        return len({self.servers[n].site for n in self.dag_members(dag)}) > 1

    def boundary(self, name: str) -> str:
        """The transport high-availability boundary: `dag:<name>` or `site:<name>`."""
        s = self.server(name)
        return f"dag:{s.dag}" if s.dag else f"site:{s.site}"

    def boundary_members(self, name: str) -> list[str]:
        b = self.boundary(name)
        return sorted(n for n in self.servers if self.boundary(n) == b)

    def same_site(self, a: str, b: str) -> bool:
        return self.server(a).site == self.server(b).site

    def transport_cost(self, a: str, b: str) -> int | None:
        """Shortest-path cost between the routing groups of two servers; None if not connected."""
        ga, gb = self.server(a).group, self.server(b).group
        if ga == gb:
            return 0
        return self._cost.get(ga, {}).get(gb)

    def connected(self, a: str, b: str) -> bool:
        return self.transport_cost(a, b) is not None


def random_topology(
    rng: random.Random,
    *,
    n_servers: int = 4,
    n_sites: int = 2,
    n_dags: int = 1,
    dag_fraction: float = 1.0,
    cost_range: tuple[int, int] = (1, 20),
    versions: tuple[str, ...] = ("2013",),
) -> Topology:
    """A random connected topology: servers spread over sites, some in DAGs, sites joined in a tree plus
    random extra links. Every choice is drawn from `rng`."""
    if n_servers < 1 or n_sites < 1:
        raise TopologyError("need at least one server and one site")
    sites = [f"site{i}" for i in range(n_sites)]
    servers = []
    for i in range(n_servers):
        site = sites[i % n_sites] if i < n_sites else rng.choice(sites)
        dag = f"dag{rng.randrange(n_dags)}" if n_dags and rng.random() < dag_fraction else None
        servers.append(Server(f"srv{i:02d}", site, dag=dag, version=rng.choice(versions)))
    links = []
    for i in range(1, n_sites):
        links.append((sites[i], sites[rng.randrange(i)], rng.randint(*cost_range)))
    for _ in range(rng.randrange(n_sites)):
        a, b = rng.sample(sites, 2) if n_sites > 1 else (sites[0], sites[0])
        if a != b:
            links.append((a, b, rng.randint(*cost_range)))
    return Topology(servers, links)
