module robotsd.dev/client

go 1.19
