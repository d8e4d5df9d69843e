module github.com/nbutton23/zxcvbn-go

go 1.20

require github.com/ccojocar/zxcvbn-go v1.0.1
