module github.com/ome-selector/ome-selector/client/go

go 1.19

// Versions of the Debian bookworm packages that client/go/vendor_from_debian.py vendors.
require (
	github.com/golang/protobuf v1.5.2
	golang.org/x/net v0.7.0
	golang.org/x/sys v0.3.0
	golang.org/x/text v0.7.0
	google.golang.org/genproto v0.0.0-20200526211855-cb27e3aa2013
	google.golang.org/grpc v1.33.3
	google.golang.org/protobuf v1.28.1
)
