package throttle

import "github.com/triadhq/triad/impl/credentials/fold"

// FoldAccount is the form of an account name LoginKey counts under (fold.Name): trimmed,
// NFKC-normalized and case-folded. Every spelling that logs in as one account (the KELVIN SIGN for
// K, fullwidth letters, upper case) must share that account's counter, or each would bring its own
// allowance of guesses. The result holds no upper-case ASCII.
func FoldAccount(account string) string { return fold.Name(account) }
