/* platform_s4u: the few SimGrid S4U calls that build a platform, for C (sim/platform.c is the one
 * caller). SimGrid 3.32 builds platforms from C++ only (simgrid/s4u/NetZone.hpp); this header wraps
 * what sim/platform.c needs and nothing else. Every element is created and connected through the
 * handle its creation returned: nothing is looked up by name. Names are given because SimGrid
 * requires them (unique per kind). No C++ exception crosses into C: a call SimGrid refuses returns
 * NULL or -1, and psg_error() says why. Call after simgrid_init, before any actor starts. */
#ifndef DDPSIM_PLATFORM_S4U_H
#define DDPSIM_PLATFORM_S4U_H

#include <simgrid/forward.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct psg_zone psg_zone;   /* a simgrid::s4u::NetZone */
typedef struct psg_point psg_point; /* a netpoint: a host's, a router, or a zone's */
typedef struct psg_link psg_link;   /* a simgrid::s4u::Link */

/* A zone routed with full tables (star = 0: a route per pair of its members, added with psg_route)
 * or as a star (star = 1: each member's route up and down, src + dst's down, psg_route with one end
 * NULL). parent NULL makes it the platform's root. */
psg_zone *psg_zone_new(psg_zone *parent, const char *name, int star);
sg_host_t psg_host(psg_zone *z, const char *name, double speed_flops);
psg_point *psg_router(psg_zone *z, const char *name);
psg_point *psg_host_point(sg_host_t h);
psg_point *psg_zone_point(psg_zone *z);
/* A link of bandwidth bw_Bps and latency lat_s; fatpipe: every flow gets up to bw_Bps, unshared. */
psg_link *psg_link_new(psg_zone *z, const char *name, double bw_Bps, double lat_s, int fatpipe);
/* One-way route from src to dst through links[0..n) (gateways for zones, else NULL). */
int psg_route(psg_zone *z, psg_point *src, psg_point *dst, psg_point *gw_src, psg_point *gw_dst, psg_link *const *links, int n);
int psg_seal(psg_zone *z);
const char *psg_error(void); /* why the last failing call failed */

#ifdef __cplusplus
}
#endif

#endif
