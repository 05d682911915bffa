package main

import "runtime/debug"

// releaseStartupMemory collects the garbage of start-up (migrations, the three specs parsed and
// compiled, the routers built: tens of MB, of which a few stay live) and hands the pages back to
// the kernel. Without it an idle server keeps them: the collector sets its next goal from the
// heap it last marked, in the middle of start-up, five times over (GOGC 400), and the runtime's
// scavenger returns nothing below that goal, so nothing would be collected or returned until
// traffic came.
func releaseStartupMemory() { debug.FreeOSMemory() }
