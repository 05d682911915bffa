package archive

// WithBatches returns o removing orders in batches of n, calling after once each batch has
// committed: what the tests need to cut a run short between batches.
func WithBatches(o Options, n int, after func(partition string)) Options {
	o.batch, o.afterBatch = n, after
	return o
}
