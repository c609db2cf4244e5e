package transport

// QueryValue is queryValue, for the tests that hold it to url.ParseQuery.
var QueryValue = queryValue

// SessionToken is sessionToken, for the tests that hold it to r.Cookie.
var SessionToken = sessionToken
