package avatar

import (
	"bytes"
	"crypto/sha256"
	"image"
	"image/color"
	"image/png"
)

// Identicon geometry: a 5x5 grid of 48px cells inside a 24px margin, 288px square.
const (
	identiconGrid   = 5
	identiconCell   = 48
	identiconMargin = 24
	identiconSize   = identiconGrid*identiconCell + 2*identiconMargin
)

// Identicon returns a PNG identicon for userID: a 5x5 grid mirrored around its middle column, its
// cells and colour taken from sha256(userID), so the same user always gets the same picture and
// the picture reveals nothing about the id.
func Identicon(userID string) []byte {
	h := sha256.Sum256([]byte(userID))
	fg := hueColor(float64(uint16(h[0])<<8|uint16(h[1])) / 65536)
	bg := color.RGBA{0xf2, 0xf2, 0xf2, 0xff}
	img := image.NewPaletted(image.Rect(0, 0, identiconSize, identiconSize), color.Palette{bg, fg})
	// 15 bits decide the three left columns (the fourth and fifth mirror the second and first).
	bit := 0
	for col := 0; col < 3; col++ {
		for row := 0; row < identiconGrid; row++ {
			on := h[2+bit/8]>>(bit%8)&1 == 1
			bit++
			if !on {
				continue
			}
			for _, c := range []int{col, identiconGrid - 1 - col} {
				x0, y0 := identiconMargin+c*identiconCell, identiconMargin+row*identiconCell
				for y := y0; y < y0+identiconCell; y++ {
					for x := x0; x < x0+identiconCell; x++ {
						img.SetColorIndex(x, y, 1)
					}
				}
			}
		}
	}
	var buf bytes.Buffer
	// Encoding a paletted image into memory cannot fail.
	_ = png.Encode(&buf, img)
	return buf.Bytes()
}

// hueColor is a saturated, mid-light colour of hue h in [0,1), readable on the light background.
func hueColor(h float64) color.RGBA {
	const s, l = 0.55, 0.5
	c := (1 - abs(2*l-1)) * s
	hp := h * 6
	x := c * (1 - abs(mod2(hp)-1))
	var r, g, b float64
	switch int(hp) {
	case 0:
		r, g = c, x
	case 1:
		r, g = x, c
	case 2:
		g, b = c, x
	case 3:
		g, b = x, c
	case 4:
		r, b = x, c
	default:
		r, b = c, x
	}
	m := l - c/2
	return color.RGBA{uint8((r + m) * 255), uint8((g + m) * 255), uint8((b + m) * 255), 0xff}
}

func abs(f float64) float64 {
	if f < 0 {
		return -f
	}
	return f
}

// mod2 is f modulo 2 for non-negative f.
func mod2(f float64) float64 { return f - 2*float64(int(f/2)) }
