package orders

import (
	"encoding/json"
	"errors"
	"strings"
	"unicode/utf8"

	"github.com/triadhq/triad/impl/kit/invalid"
	"github.com/triadhq/triad/impl/surfaces/orders/money"
)

// CheckNewUser lists every problem of a registration's fields at once (Problems), or nil.
func CheckNewUser(username, pw string, t UserType) error {
	errs := nameAndTypeProblems(username, t)
	switch n := int64(utf8.RuneCountInString(pw)); {
	case n < MinPassword:
		errs = append(errs, InvalidInput(invalid.Bound("", "password", invalid.TooShort, invalid.Int(MinPassword))))
	case n > MaxPassword:
		errs = append(errs, InvalidInput(invalid.Bound("", "password", invalid.TooLong, invalid.Int(MaxPassword))))
	}
	return JoinInvalid(errs...)
}

// nameAndTypeProblems are what CheckNewUser finds wrong with a username and a role.
func nameAndTypeProblems(username string, t UserType) []error {
	var errs []error
	switch n := int64(utf8.RuneCountInString(username)); {
	case n < MinUsername:
		errs = append(errs, InvalidInput(invalid.Bound("", "username", invalid.TooShort, invalid.Int(MinUsername))))
	case n > MaxUsername:
		errs = append(errs, InvalidInput(invalid.Bound("", "username", invalid.TooLong, invalid.Int(MaxUsername))))
	case !usernameRE.MatchString(username):
		errs = append(errs, InvalidInput(invalid.Expect("", "username", invalid.Pattern, usernameRE.String())))
	}
	if !t.Valid() {
		errs = append(errs, InvalidInput(invalid.OneOf("", "userType", []string{string(Customer), string(Performer)})))
	}
	return errs
}

// CheckNewOrder checks a new order's description and price (the decimal as sent: a JSON number's
// literal or the decimal string) and returns the price in kopecks, or every problem of the two at
// once (Problems).
func CheckNewOrder(description, price string) (money.Kopecks, error) {
	k, priceErr := CheckPrice(price)
	return k, JoinInvalid(checkDescription(description), priceErr)
}

// CheckPrice reads a price as sent (a JSON number's literal or a decimal string) into kopecks,
// refusing what money.Parse refuses with the problem's code and limit.
func CheckPrice(price string) (money.Kopecks, error) {
	k, err := money.Parse(price)
	switch {
	case err == nil:
		return k, nil
	case errors.Is(err, money.ErrTooPrecise):
		return 0, InvalidInput(invalid.Bound("", "price", invalid.Precision, "2"))
	case errors.Is(err, money.ErrTooSmall):
		return 0, InvalidInput(invalid.Bound("", "price", invalid.TooSmall, limit(1)))
	case errors.Is(err, money.ErrOutOfRange):
		return 0, InvalidInput(invalid.Bound("", "price", invalid.TooLarge, limit(money.MaxPrice)))
	default:
		return 0, InvalidInput(invalid.Expect("", "price", invalid.Format, "decimal"))
	}
}

// checkDescription refuses a description that is blank, too long or holds NUL.
func checkDescription(description string) error {
	switch {
	case strings.TrimSpace(description) == "":
		if description == "" {
			return InvalidInput(invalid.Bound("", "description", invalid.TooShort, "1"))
		}
		return InvalidInput(invalid.New("", "description", invalid.Blank))
	case utf8.RuneCountInString(description) > MaxDescription:
		return InvalidInput(invalid.Bound("", "description", invalid.TooLong, invalid.Int(MaxDescription)))
	case strings.ContainsRune(description, 0):
		// PostgreSQL text cannot hold NUL; refuse it here rather than fail the insert.
		return InvalidInput(invalid.New("", "description", invalid.Encoding))
	}
	return nil
}

// checkPriceRange refuses kopecks outside [0.01, money.MaxPrice].
func checkPriceRange(k money.Kopecks) error {
	switch {
	case k < 1:
		return InvalidInput(invalid.Bound("", "price", invalid.TooSmall, limit(1)))
	case k > money.MaxPrice:
		return InvalidInput(invalid.Bound("", "price", invalid.TooLarge, limit(money.MaxPrice)))
	}
	return nil
}

// limit writes an amount as the spec writes its bounds (0.01, 1000000).
func limit(k money.Kopecks) json.Number {
	return json.Number(strings.TrimSuffix(strings.TrimRight(k.String(), "0"), "."))
}
