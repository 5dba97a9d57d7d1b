/* platform_s4u: see platform_s4u.h. */
#include "platform_s4u.h"

#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/NetZone.hpp>

#include <cstdio>
#include <exception>
#include <vector>

namespace sg4 = simgrid::s4u;
using simgrid::kernel::routing::NetPoint;

static char g_error[256];

static void fail(const char *what, const std::exception *x) {
  std::snprintf(g_error, sizeof g_error, "SimGrid refused %s: %s", what, x ? x->what() : "unknown error");
}

/* Runs f, turning any exception into a message and `bad`. */
template <typename T, typename F> static T guarded(const char *what, T bad, F f) {
  try {
    return f();
  } catch (const std::exception &x) {
    fail(what, &x);
  } catch (...) {
    fail(what, nullptr);
  }
  return bad;
}

static sg4::NetZone *Z(psg_zone *z) { return reinterpret_cast<sg4::NetZone *>(z); }
static NetPoint *N(psg_point *p) { return reinterpret_cast<NetPoint *>(p); }

extern "C" {

psg_zone *psg_zone_new(psg_zone *parent, const char *name, int star) {
  return guarded("a zone", (psg_zone *)nullptr, [&] {
    sg4::NetZone *z = star ? sg4::create_star_zone(name) : sg4::create_full_zone(name);
    if (parent) z->set_parent(Z(parent));
    return reinterpret_cast<psg_zone *>(z);
  });
}

sg_host_t psg_host(psg_zone *z, const char *name, double speed_flops) {
  return guarded("a host", (sg_host_t) nullptr, [&] { return Z(z)->create_host(name, speed_flops)->seal(); });
}

psg_point *psg_router(psg_zone *z, const char *name) {
  return guarded("a router", (psg_point *)nullptr, [&] { return reinterpret_cast<psg_point *>(Z(z)->create_router(name)); });
}

psg_point *psg_host_point(sg_host_t h) { return reinterpret_cast<psg_point *>(h->get_netpoint()); }

psg_point *psg_zone_point(psg_zone *z) { return reinterpret_cast<psg_point *>(Z(z)->get_netpoint()); }

psg_link *psg_link_new(psg_zone *z, const char *name, double bw_Bps, double lat_s, int fatpipe) {
  return guarded("a link", (psg_link *)nullptr, [&] {
    sg4::Link *l = Z(z)->create_link(name, bw_Bps)->set_latency(lat_s);
    if (fatpipe) l->set_sharing_policy(sg4::Link::SharingPolicy::FATPIPE);
    return reinterpret_cast<psg_link *>(l->seal());
  });
}

int psg_route(psg_zone *z, psg_point *src, psg_point *dst, psg_point *gw_src, psg_point *gw_dst, psg_link *const *links, int n) {
  return guarded("a route", -1, [&] {
    std::vector<sg4::LinkInRoute> route;
    route.reserve((size_t)n);
    for (int i = 0; i < n; i++) route.emplace_back(reinterpret_cast<const sg4::Link *>(links[i]));
    Z(z)->add_route(N(src), N(dst), N(gw_src), N(gw_dst), route, false);
    return 0;
  });
}

int psg_seal(psg_zone *z) {
  return guarded("a zone's seal", -1, [&] {
    Z(z)->seal();
    return 0;
  });
}

const char *psg_error(void) { return g_error; }
}
