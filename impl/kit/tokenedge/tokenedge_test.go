package tokenedge_test

import (
	"strings"
	"testing"

	"github.com/triadhq/triad/gen/brandsapi"
	"github.com/triadhq/triad/impl/kit/tokenedge"
)

// TestNew_UnknownOperationStopsTheStart: an operation id the edge is given (device-cookie logins,
// per-address operations) that the spec does not have stops the start naming it, before anything
// is built: a typo would otherwise turn device cookies or a per-address count off without a word.
func TestNew_UnknownOperationStopsTheStart(t *testing.T) {
	for _, tc := range []struct {
		s   tokenedge.Surface[struct{}]
		bad string
	}{
		{tokenedge.Surface[struct{}]{Name: "brands", Spec: brandsapi.GetSpec, DeviceOps: []string{"LoginUsr"}}, "LoginUsr"},
		{tokenedge.Surface[struct{}]{Name: "brands", Spec: brandsapi.GetSpec, DeviceOps: []string{"LoginUser"},
			ClientAddr: []string{"LoginUser", "RegisterBrandUser"}}, "RegisterBrandUser"},
	} {
		_, err := tokenedge.New(nil, tc.s, tokenedge.Options{})
		if err == nil || !strings.Contains(err.Error(), tc.bad) || !strings.Contains(err.Error(), "brands edge") {
			t.Errorf("DeviceOps %v, ClientAddr %v: %v, want an error naming %s", tc.s.DeviceOps, tc.s.ClientAddr, err, tc.bad)
		}
	}
}
