"""The page, one module per view: widgets and wiring only; the model work lives in lens/."""
