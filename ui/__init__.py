"""The page, one module per view: widgets and wiring only; the model work lives in lens/.

A view is a module with `build(translator) -> dict` that creates its widgets inside the Blocks
being built (app.py calls it) and wires them to lens/ functions. A view that draws maps sends
one explanation (see ui.translate.page_payload / viz.sentence_payload) to a gr.HTML made by
ui.assets.viewer_component(mount=...), and the browser draws it with ui/static/ (no server
round trip when the user switches kind, layer, head, view or token).
"""
