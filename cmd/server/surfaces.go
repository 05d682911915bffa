package main

import (
	"github.com/triadhq/triad/impl/kit"
	authhttp "github.com/triadhq/triad/impl/surfaces/auth/httpapi"
	brandshttp "github.com/triadhq/triad/impl/surfaces/brands/httpapi"
	ordershttp "github.com/triadhq/triad/impl/surfaces/orders/httpapi"
)

// surface is one API: its name (its spec is api/<name>.yaml) and its mount, made from the
// server's configuration.
type surface struct {
	name  string
	mount func(*app) kit.Mount
}

// surfaces mount the APIs, one per spec in api/ (TestSurfaces_EverySpecIsMounted), every one the
// same way: a kit.Mount called with the server's kit.Deps (kit.Shared.Deps). orders, brands and
// auth make theirs from their own settings, which the configuration holds as they are (Config.Orders,
// Config.Brands, Config.Auth.Settings: the settings rows set their fields); a surface made by `make new-surface` is one line at the
// end, with its import (docs/adding-a-surface.md). The order is /docs' order; nothing else depends
// on it (token sources are resolved by name once all are mounted).
var surfaces = []surface{
	{"orders", func(a *app) kit.Mount { return ordershttp.Mount(a.cfg.Orders) }},
	{"brands", func(a *app) kit.Mount { return brandshttp.Mount(a.cfg.Brands) }},
	{"auth", func(a *app) kit.Mount { return authhttp.Mount(a.cfg.Auth.Settings) }},
	// new surfaces: make new-surface adds its line above this one.
}

// kitSurface registers a surface whose mount needs no settings of its own.
func kitSurface(name string, mount kit.Mount) surface {
	return surface{name, func(*app) kit.Mount { return mount }}
}
