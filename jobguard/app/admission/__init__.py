"""The AdmissionReview wire format, shared by the server and `jobguard review`: reading a
review (`review.parse_review`, bodies over 1 MiB by `exact_json`, /mutate's fields by
`envelope`), judging it through the admission chain and writing the answer."""
